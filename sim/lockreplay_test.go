package sim_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/sim"
)

// lockCounter has every PE take a lock rounds times and add one to a
// counter on PE 0 under it with a G and a P, then checks the total.
func lockCounter(rounds int) func(p *shmem.PE) error {
	return func(p *shmem.PE) error {
		l, _ := shmem.Calloc[int64](p, 1)
		c, err := shmem.Calloc[int64](p, 1)
		if err != nil {
			return err
		}
		for range rounds {
			if err := shmem.SetLock(p, l); err != nil {
				return err
			}
			v, err := shmem.G(p, c, 0)
			if err != nil {
				return err
			}
			if err := shmem.P(p, c, v+1, 0); err != nil {
				return err
			}
			if err := shmem.ClearLock(p, l); err != nil {
				return err
			}
		}
		if err := p.BarrierAll(); err != nil {
			return err
		}
		if got, want := c.Local(p)[0], int64(rounds*p.NPEs()); p.MyPE() == 0 && got != want {
			return fmt.Errorf("counter %d, want %d", got, want)
		}
		return nil
	}
}

// TestLockContentionReplays: a seed replays a program whose PEs contend
// for a lock trace for trace. A waiter that spun for 2 ms of real time
// checked its peers (a read of each, every one a scheduling point) at a
// point of the schedule that real time chose: 16 PEs taking a lock 30
// times each replayed in no seed of 3 under -race.
func TestLockContentionReplays(t *testing.T) {
	for seed := int64(1); seed <= 3; seed++ {
		var a, b bytes.Buffer
		for _, w := range []*bytes.Buffer{&a, &b} {
			if err := sim.Run(16, lockCounter(30), sim.WithDelivery(sim.Lazy), sim.WithSeed(seed), sim.WithTrace(w)); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Errorf("seed %d: two runs wrote different traces (%d and %d bytes)", seed, a.Len(), b.Len())
		}
	}
}
