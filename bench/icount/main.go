// Command icount makes n 8-byte operations of one kind from PE 0 to PE 1
// in the simulator (mapped udma paths), for callgrind to count the
// instructions of one: run it with the instantiated operation as the
// collection toggle, and divide the total by n. bench/NOTES.md quotes
// the counts (this VM has no hardware counters for perf):
//
//	go build -o /tmp/icount ./bench/icount
//	valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//	  '--toggle-collect=github.com/goshmem/shmem.AtomicCompareSwap[go.shape.int64]' \
//	  /tmp/icount -op cswap -n 4000
//
// Ops: put, get, fadd (AtomicFetchAdd), cswap (AtomicCompareSwap).
package main

import (
	"flag"
	"fmt"
	"os"

	shmem "github.com/goshmem/shmem"
	"github.com/goshmem/shmem/sim"
)

var sink int64

func main() {
	op := flag.String("op", "put", "put, get, fadd or cswap")
	n := flag.Int("n", 4000, "operations")
	flag.Parse()
	err := sim.Run(2, func(p *shmem.PE) error {
		s, err := shmem.Calloc[int64](p, 1)
		if err != nil {
			return err
		}
		if p.MyPE() == 0 {
			if err := ops(p, s, *op, *n); err != nil {
				return err
			}
		}
		return p.BarrierAll()
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "icount:", err)
		os.Exit(1)
	}
}

func ops(p *shmem.PE, s shmem.Sym[int64], op string, n int) error {
	buf := []int64{1}
	for range n {
		var v int64
		var err error
		switch op {
		case "put":
			err = shmem.Put(p, s, buf, 1)
		case "get":
			err = shmem.Get(p, buf, s, 1)
		case "fadd":
			v, err = shmem.AtomicFetchAdd(p, s, 1, 1)
		case "cswap":
			v, err = shmem.AtomicCompareSwap(p, s, 0, 0, 1)
		default:
			return fmt.Errorf("unknown op %q", op)
		}
		if err != nil {
			return err
		}
		sink += v
	}
	return nil
}
