package shmem_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/sim"
)

// A ring: every PE puts its rank into its right neighbour's symmetric
// array, and a barrier makes the puts visible.
func Example() {
	err := sim.Run(4, func(p *shmem.PE) error {
		me, n := p.MyPE(), p.NPEs()
		from, err := shmem.Calloc[int64](p, 1) // the same object on every PE
		if err != nil {
			return err
		}
		if err := shmem.P(p, from, int64(me), (me+1)%n); err != nil {
			return err
		}
		if err := p.BarrierAll(); err != nil { // completes the puts, then syncs
			return err
		}
		if me == 0 {
			fmt.Println("PE 0 heard from PE", from.Local(p)[0])
		}
		return nil
	})
	fmt.Println("err:", err)
	// Output:
	// PE 0 heard from PE 3
	// err: <nil>
}

// Init with no options joins a world of one PE.
func ExampleInit() {
	p, err := shmem.Init(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	// The error-exit pattern: the body returns at its first error, and
	// Finalize, called on every path, ends the PE and reports what
	// happened to the world (a PE that failed, a GlobalExit). Do not
	// defer Finalize and drop its error.
	if err := errors.Join(hello(p), p.Finalize()); err != nil {
		fmt.Println(err)
	}
	// Output: goshmem: PE 0 of 1, OpenSHMEM 1.5
}

func hello(p *shmem.PE) error {
	if err := p.BarrierAll(); err != nil {
		return err
	}
	major, minor := shmem.InfoGetVersion()
	fmt.Printf("%s: PE %d of %d, OpenSHMEM %d.%d\n", shmem.InfoGetName(), p.MyPE(), p.NPEs(), major, minor)
	return nil
}

func ExampleMalloc() {
	_ = sim.Run(2, func(p *shmem.PE) error {
		// Collective: both PEs ask for the same thing and get equal Syms.
		s, err := shmem.Malloc[float64](p, 8)
		if err != nil {
			return err
		}
		defer shmem.Free(p, s)
		if p.MyPE() == 0 {
			fmt.Println("elements:", s.Len(), "local part:", len(s.Local(p)))
		}
		// A mismatched call fails on every PE instead of corrupting the heaps.
		_, err = shmem.Malloc[float64](p, 8+p.MyPE())
		if p.MyPE() == 0 {
			fmt.Println("mismatch is invalid argument:", err != nil && isInvalid(err))
		}
		return nil
	})
	// Output:
	// elements: 8 local part: 8
	// mismatch is invalid argument: true
}

func ExamplePut() {
	_ = sim.Run(2, func(p *shmem.PE) error {
		dst, err := shmem.Calloc[int32](p, 3)
		if err != nil {
			return err
		}
		if p.MyPE() == 0 {
			if err := shmem.Put(p, dst, []int32{7, 8, 9}, 1); err != nil {
				return err
			}
		}
		if err := p.BarrierAll(); err != nil {
			return err
		}
		if p.MyPE() == 1 {
			fmt.Println(dst.Local(p))
		}
		return nil
	})
	// Output: [7 8 9]
}

func ExampleGet() {
	_ = sim.Run(2, func(p *shmem.PE) error {
		src, err := shmem.Malloc[int64](p, 2)
		if err != nil {
			return err
		}
		copy(src.Local(p), []int64{int64(p.MyPE()) * 10, int64(p.MyPE())*10 + 1})
		if err := p.BarrierAll(); err != nil {
			return err
		}
		if p.MyPE() == 0 {
			got := make([]int64, 2)
			if err := shmem.Get(p, got, src, 1); err != nil {
				return err
			}
			fmt.Println(got)
		}
		return p.BarrierAll()
	})
	// Output: [10 11]
}

func ExampleAtomicFetchAdd() {
	_ = sim.Run(4, func(p *shmem.PE) error {
		ticket, err := shmem.Calloc[int64](p, 1)
		if err != nil {
			return err
		}
		// Every PE takes a distinct ticket from the counter on PE 0.
		if _, err := shmem.AtomicFetchAdd(p, ticket, 1, 0); err != nil {
			return err
		}
		if err := p.BarrierAll(); err != nil {
			return err
		}
		if p.MyPE() == 0 {
			fmt.Println("tickets taken:", ticket.Local(p)[0])
		}
		return nil
	})
	// Output: tickets taken: 4
}

func ExampleWaitUntil() {
	_ = sim.Run(2, func(p *shmem.PE) error {
		flag, err := shmem.Calloc[int64](p, 1)
		if err != nil {
			return err
		}
		if p.MyPE() == 1 {
			return shmem.AtomicSet(p, flag, 42, 0)
		}
		if err := shmem.WaitUntil(p, flag, shmem.CmpEQ, 42); err != nil {
			return err
		}
		fmt.Println("flag is", flag.Local(p)[0])
		return nil
	})
	// Output: flag is 42
}

func ExamplePutSignal() {
	_ = sim.Run(2, func(p *shmem.PE) error {
		data, err := shmem.Calloc[int32](p, 4)
		if err != nil {
			return err
		}
		sig, err := shmem.Calloc[uint64](p, 1)
		if err != nil {
			return err
		}
		if p.MyPE() == 0 {
			// The data and the signal travel together: whoever sees the
			// signal sees the data.
			return shmem.PutSignal(p, data, []int32{1, 2, 3, 4}, sig, 1, shmem.SignalSet, 1)
		}
		if _, err := shmem.SignalWaitUntil(p, sig, shmem.CmpEQ, 1); err != nil {
			return err
		}
		fmt.Println(data.Local(p))
		return nil
	})
	// Output: [1 2 3 4]
}

func ExampleSetLock() {
	_ = sim.Run(3, func(p *shmem.PE) error {
		lock, err := shmem.Calloc[int64](p, 1)
		if err != nil {
			return err
		}
		count, err := shmem.Calloc[int64](p, 1)
		if err != nil {
			return err
		}
		if err := shmem.SetLock(p, lock); err != nil {
			return err
		}
		// A read-modify-write that is safe only under the lock.
		v, err := shmem.G(p, count, 0)
		if err == nil {
			err = shmem.P(p, count, v+1, 0)
		}
		if err != nil {
			return err
		}
		if err := shmem.ClearLock(p, lock); err != nil { // completes the P first
			return err
		}
		if err := p.BarrierAll(); err != nil {
			return err
		}
		if p.MyPE() == 0 {
			fmt.Println("count:", count.Local(p)[0])
		}
		return nil
	})
	// Output: count: 3
}

func ExamplePtr() {
	_ = sim.Run(2, func(p *shmem.PE) error {
		s, err := shmem.Calloc[int64](p, 1)
		if err != nil {
			return err
		}
		s.Local(p)[0] = int64(100 + p.MyPE())
		if err := p.BarrierAll(); err != nil {
			return err
		}
		if p.MyPE() == 0 {
			// On one node the peer's memory is mapped: plain loads work.
			if view, ok := shmem.Ptr(p, s, 1); ok {
				fmt.Println("PE 1 holds", view[0])
			}
		}
		return p.BarrierAll()
	})
	// Output: PE 1 holds 101
}

func ExamplePE_WithContext() {
	_ = sim.Run(2, func(p *shmem.PE) error {
		flag, err := shmem.Calloc[int64](p, 1)
		if err != nil {
			return err
		}
		if p.MyPE() == 0 {
			// A service shutting down: the context is done, so a wait for
			// a flag nobody will set returns instead of blocking.
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			err := shmem.WaitUntil(p.WithContext(ctx), flag, shmem.CmpEQ, 1)
			fmt.Println(errors.Is(err, context.Canceled))
		}
		return p.BarrierAll()
	})
	// Output: true
}

func ExamplePE_OnFailure() {
	_ = sim.Run(3, func(p *shmem.PE) error {
		if p.MyPE() == 2 {
			return errors.New("out of disk") // PE 2 fails
		}
		heard := make(chan string, 1)
		p.OnFailure(func(pe int, reason string) {
			if pe == 2 { // a survivor leaving later is reported too
				heard <- reason
			}
		})
		err := p.BarrierAll() // ends with ErrPEFailed, naming PE 2
		if reason := <-heard; p.MyPE() == 0 {
			fmt.Println("PE 2 failed:", strings.Contains(reason, "out of disk"))
		}
		return err
	})
	// Output: PE 2 failed: true
}
