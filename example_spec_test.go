package shmem_test

import (
	"errors"
	"fmt"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/sim"
)

// Two goroutines of a PE each stream puts through a context of their own;
// each Quiet completes its own context's puts only, so neither waits for
// the other's traffic (over the network each context has connections of
// its own).
func ExamplePE_CreateCtx() {
	err := sim.Run(2, func(p *shmem.PE) error {
		buf, err := shmem.Calloc[int64](p, 2)
		if err != nil {
			return err
		}
		other := 1 - p.MyPE()
		errc := make(chan error, 2)
		for g := 0; g < 2; g++ {
			go func() {
				ctx, err := p.CreateCtx(shmem.CtxPrivate)
				if err != nil {
					errc <- err
					return
				}
				for i := 1; i <= 100; i++ {
					if err := shmem.PutNBI(ctx, buf.Slice(g, g+1), []int64{int64(i)}, other); err != nil {
						errc <- err
						return
					}
					// Puts to one word land in any order unless fenced:
					// this context's Fence keeps the last one last.
					ctx.Fence()
				}
				errc <- errors.Join(ctx.Quiet(), ctx.Destroy()) // this context's puts only
			}()
		}
		if err := errors.Join(<-errc, <-errc); err != nil {
			return err
		}
		if err := p.BarrierAll(); err != nil {
			return err
		}
		if p.MyPE() == 0 {
			fmt.Println("PE 0 received", buf.Local(p))
		}
		return nil
	})
	fmt.Println("err:", err)
	// Output:
	// PE 0 received [100 100]
	// err: <nil>
}

// A team context addresses PEs by their number in the team.
func ExampleTeam_CreateCtx() {
	_ = sim.Run(4, func(p *shmem.PE) error {
		word, err := shmem.Calloc[int64](p, 1)
		if err != nil {
			return err
		}
		odd, err := p.TeamWorld().SplitStrided(1, 2, 2) // world PEs 1 and 3
		if err != nil {
			return err
		}
		if odd != nil {
			ctx, err := odd.CreateCtx()
			if err != nil {
				return err
			}
			// Team PE 1 is world PE 3.
			if err := shmem.AtomicAdd(ctx, word, int64(p.MyPE()), 1); err != nil {
				return err
			}
			if err := ctx.Destroy(); err != nil {
				return err
			}
		}
		if err := p.BarrierAll(); err != nil {
			return err
		}
		if p.MyPE() == 3 {
			fmt.Println("world PE 3 holds", word.Local(p)[0])
		}
		return nil
	})
	// Output: world PE 3 holds 4
}

// A heap that starts at 1 MiB and may grow to 64: an allocation of 8 MiB
// maps further segments on every PE, and the Sym works like any other.
func ExampleWithHeapLimit() {
	err := sim.Run(2, func(p *shmem.PE) error {
		big, err := shmem.Malloc[byte](p, 8<<20) // does not fit in 1 MiB: the heap grows
		if err != nil {
			return err
		}
		if err := shmem.Put(p, big.Slice(8<<20-5, 8<<20), []byte("grown"), 1-p.MyPE()); err != nil {
			return err
		}
		if err := p.BarrierAll(); err != nil {
			return err
		}
		if p.MyPE() == 0 {
			fmt.Printf("%s\n", big.Local(p)[8<<20-5:])
		}
		_, err = shmem.Malloc[byte](p, 128<<20) // past the limit, on every PE
		if p.MyPE() == 0 {
			fmt.Println(errors.Is(err, shmem.ErrOutOfMemory))
		}
		return shmem.Free(p, big)
	}, sim.WithHeapSize(1<<20), sim.WithHeapLimit(64<<20))
	fmt.Println("err:", err)
	// Output:
	// grown
	// true
	// err: <nil>
}
