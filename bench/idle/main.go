// Command idle measures what a PE costs while it waits: PE 1 waits in
// WaitUntil for -wait while PE 0 sleeps, then PE 0 sets the flag; each PE
// prints the CPU time its process used meanwhile. It shows that the polling
// default (SHMEM_BUSY_POLL) does not spin while nothing arrives.
//
// Usage (2 PEs over TCP, polling and parking):
//
//	go build -o /tmp/idle ./bench/idle
//	shmemrun -np 2 --network --no-tls /tmp/idle -notls
//	SHMEM_BUSY_POLL=0 shmemrun -np 2 --network --no-tls /tmp/idle -notls
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/goshmem/shmem"
)

func main() {
	wait := flag.Duration("wait", 2*time.Second, "how long PE 1 waits")
	noTLS := flag.Bool("notls", false, "join a world made without TLS (shmemrun --no-tls)")
	flag.Parse()
	if err := run(*wait, *noTLS); err != nil {
		fmt.Fprintln(os.Stderr, "idle:", err)
		os.Exit(1)
	}
}

func run(wait time.Duration, noTLS bool) error {
	var opts []shmem.Option
	if noTLS {
		opts = append(opts, shmem.WithoutTLS())
	}
	p, err := shmem.Init(context.Background(), opts...)
	if err != nil {
		return err
	}
	if p.NPEs() != 2 {
		return fmt.Errorf("needs 2 PEs, has %d", p.NPEs())
	}
	flag, err := shmem.Calloc[int64](p, 1)
	if err != nil {
		return err
	}
	if err := p.BarrierAll(); err != nil {
		return err
	}
	c0, t0 := cpuTime(), time.Now()
	if p.MyPE() == 0 {
		time.Sleep(wait)
		if err := shmem.P(p, flag, 1, 1); err != nil {
			return err
		}
		err = p.Quiet()
	} else {
		err = shmem.WaitUntil(p, flag, shmem.CmpEQ, 1)
	}
	if err != nil {
		return err
	}
	fmt.Printf("PE %d: %v CPU in %v\n", p.MyPE(), (cpuTime() - c0).Round(time.Millisecond), time.Since(t0).Round(time.Millisecond))
	if err := p.BarrierAll(); err != nil {
		return err
	}
	return p.Finalize()
}

// cpuTime is the user and system time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
