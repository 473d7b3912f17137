package sim_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/sim"
)

// TestHeldWriteIsNoDeadlock: PE 1 holds the lock and waits for PE 0's
// flags, which Lazy delivery holds in flight, while PE 0 spins in SetLock
// through the schedule, where the flags land, the slowest hundreds of
// steps later. Both PEs
// are blocked and nothing changes for a while in real time, but the world
// is not stuck: the real-time deadlock detector, given a grace of a few
// milliseconds here, must wait for the held write instead of reporting a
// deadlock (it did, with the default grace, under -race).
func TestHeldWriteIsNoDeadlock(t *testing.T) {
	for seed := int64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			err := sim.Run(2, func(p *shmem.PE) error {
				const flags = 64
				lock, _ := shmem.Calloc[int64](p, 1)
				flag, err := shmem.Calloc[int64](p, flags)
				if err != nil {
					return err
				}
				if p.MyPE() == 1 {
					if err := shmem.SetLock(p, lock); err != nil {
						return err
					}
					if err := p.SyncAll(); err != nil {
						return err
					}
					for i := range flags {
						if err := shmem.WaitUntil(p, flag.Slice(i, i+1), shmem.CmpEQ, 1); err != nil {
							return err
						}
					}
					return shmem.ClearLock(p, lock)
				}
				if err := p.SyncAll(); err != nil {
					return err
				}
				for i := range flags {
					if err := shmem.P(p, flag.Slice(i, i+1), 1, 1); err != nil { // held until it lands
						return err
					}
				}
				if err := shmem.SetLock(p, lock); err != nil {
					return err
				}
				return shmem.ClearLock(p, lock)
			}, sim.WithDelivery(sim.Lazy), sim.WithSeed(seed), sim.WithDeadlockGrace(2*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
