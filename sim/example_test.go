package sim_test

import (
	"errors"
	"fmt"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/sim"
)

// errStale is what putThenFlag's PE 1 returns when the flag beat the data.
var errStale = errors.New("flag seen before the data")

// putThenFlag has PE 0 put data and then raise a flag on PE 1, with sep
// (nothing, Fence or Quiet) between them; PE 1 waits for the flag and
// fails with errStale when the data is not all there.
func putThenFlag(sep func(p *shmem.PE) error) func(p *shmem.PE) error {
	return func(p *shmem.PE) error {
		data, _ := shmem.Calloc[int64](p, 4)
		flag, err := shmem.Calloc[int64](p, 1)
		if err != nil {
			return err
		}
		if p.MyPE() == 0 {
			if err := shmem.Put(p, data, []int64{1, 2, 3, 4}, 1); err != nil {
				return err
			}
			if err := sep(p); err != nil {
				return err
			}
			return shmem.P(p, flag, 1, 1)
		}
		if err := shmem.WaitUntil(p, flag, shmem.CmpEQ, 1); err != nil {
			return err
		}
		if got := data.Local(p); got[3] != 4 {
			return fmt.Errorf("%w: %v", errStale, got)
		}
		return nil
	}
}

// Example_manySeeds: a missing Fence shows in some of Lazy mode's
// schedules only, so a test of ordering loops over seeds; each failure
// names its seed, and WithSeed replays it.
func Example_manySeeds() {
	failures := func(sep func(p *shmem.PE) error) (n int) {
		for seed := int64(0); seed < 64; seed++ {
			if err := sim.Run(2, putThenFlag(sep), sim.WithDelivery(sim.Lazy), sim.WithSeed(seed)); err != nil {
				n++
			}
		}
		return n
	}
	fmt.Println("without the Fence some seeds fail:", failures(none) > 0)
	fmt.Println("with it, seeds that fail:", failures(fence))
	// Output:
	// without the Fence some seeds fail: true
	// with it, seeds that fail: 0
}
