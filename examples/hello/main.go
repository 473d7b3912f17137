// Command hello is the smallest goshmem program: every PE says hello,
// waits for the others and finalizes.
//
//	go run ./examples/hello -pes 4          # 4 PEs simulated in one process
//	shmemrun -np 4 go run ./examples/hello  # 4 processes
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/sim"
)

func main() {
	pes := flag.Int("pes", 0, "simulate this many PEs in one process (0: join the world the environment describes, e.g. under shmemrun)")
	flag.Parse()
	var err error
	if *pes > 0 {
		err = sim.Run(*pes, hello)
	} else {
		err = initAndRun()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "hello:", err)
		os.Exit(1)
	}
}

// initAndRun joins the world of processes (or a world of one PE when no
// launcher started this process).
func initAndRun() error {
	p, err := shmem.Init(context.Background())
	if err != nil {
		return err
	}
	// Finalize on every path, keeping its error: it ends this PE and
	// reports what happened to the world (a PE that failed, a GlobalExit).
	return errors.Join(hello(p), p.Finalize())
}

func hello(p *shmem.PE) error {
	fmt.Printf("hello from PE %d of %d\n", p.MyPE(), p.NPEs())
	return p.BarrierAll()
}
