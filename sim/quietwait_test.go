package sim_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/sim"
)

var errNotTransitive = errors.New("flag relayed before the data landed")

// fenceRelay has PE 0 put data on PE 2, then flag PE 1, with sep between;
// PE 1 relays the flag to PE 2, which then reads the data. A Fence does
// not order writes to different PEs, so only a Quiet makes it correct.
func fenceRelay(sep func(p *shmem.PE) error) func(p *shmem.PE) error {
	return func(p *shmem.PE) error {
		data, _ := shmem.Calloc[int64](p, 4)
		flag, err := shmem.Calloc[int64](p, 1)
		if err != nil {
			return err
		}
		switch p.MyPE() {
		case 0:
			if err := shmem.Put(p, data, []int64{1, 2, 3, 4}, 2); err != nil {
				return err
			}
			if err := sep(p); err != nil {
				return err
			}
			return shmem.P(p, flag, 1, 1)
		case 1:
			if err := shmem.WaitUntil(p, flag, shmem.CmpEQ, 1); err != nil {
				return err
			}
			return shmem.P(p, flag, 1, 2)
		}
		if err := shmem.WaitUntil(p, flag, shmem.CmpEQ, 1); err != nil {
			return err
		}
		if got := data.Local(p); got[3] != 4 {
			return fmt.Errorf("%w: %v", errNotTransitive, got)
		}
		return nil
	}
}

// TestLazyQuietWaitsForArrival: a Quiet (here the one Finalize makes)
// waits for its writes to come due while the other PEs run on, as a real
// one waits for acks, instead of landing them at once. A Fence used where
// a Quiet is needed (PE 0's data to PE 2 and its flag to PE 1, relayed)
// then fails in several seeds of 64, not in one or none: PE 2 must read
// before PE 0's Quiet completes, which a Quiet that landed everything at
// once left no time for. With the Quiet no seed fails.
func TestLazyQuietWaitsForArrival(t *testing.T) {
	const n = 64
	failed := 0
	for s := int64(0); s < n; s++ {
		err := sim.Run(3, fenceRelay(fence), lazy(s)...)
		switch {
		case errors.Is(err, errNotTransitive):
			failed++
		case err != nil:
			t.Fatalf("seed %d: %v", s, err)
		}
		if err := sim.Run(3, fenceRelay(quiet), lazy(s)...); err != nil {
			t.Fatalf("seed %d, with the Quiet: %v", s, err)
		}
	}
	if failed < 4 {
		t.Fatalf("the Fence in place of a Quiet failed in %d seeds of %d: want at least 4", failed, n)
	}
}
