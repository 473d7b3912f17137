package sim_test

import (
	"fmt"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/sim"
)

// putThenFlag has PE 0 put data and then raise a flag on PE 1, with a
// Fence between them or not; PE 1 fails if it sees the flag first.
func putThenFlag(withFence bool) func(p *shmem.PE) error {
	return func(p *shmem.PE) error {
		data, _ := shmem.Calloc[int64](p, 8)
		flag, err := shmem.Calloc[int64](p, 1)
		if err != nil {
			return err
		}
		if p.MyPE() == 0 {
			if err := shmem.Put(p, data, []int64{1, 2, 3, 4, 5, 6, 7, 8}, 1); err != nil {
				return err
			}
			if withFence {
				p.Fence()
			}
			return shmem.P(p, flag, 1, 1)
		}
		if err := shmem.WaitUntil(p, flag, shmem.CmpEQ, 1); err != nil {
			return err
		}
		if got := data.Local(p); got[7] != 8 {
			return fmt.Errorf("flag seen before the data: %v", got)
		}
		return nil
	}
}

// Example_manySeeds: a missing Fence shows in some of Lazy mode's
// schedules only, so a test of ordering loops over seeds; each failure
// names its seed, and WithSeed replays it.
func Example_manySeeds() {
	failures := func(withFence bool) (n int) {
		for seed := int64(0); seed < 64; seed++ {
			if err := sim.Run(2, putThenFlag(withFence), sim.WithDelivery(sim.Lazy), sim.WithSeed(seed)); err != nil {
				n++
			}
		}
		return n
	}
	fmt.Println("without the Fence some seeds fail:", failures(false) > 0)
	fmt.Println("with it, seeds that fail:", failures(true))
	// Output:
	// without the Fence some seeds fail: true
	// with it, seeds that fail: 0
}
