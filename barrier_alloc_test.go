package shmem_test

import (
	"fmt"
	"testing"

	"github.com/goshmem/shmem"
)

// TestBarrierAllocatesNothing: BarrierAll, SyncAll and a split team's
// Barrier and Sync allocate nothing per call, on both PEs at once
// (BenchmarkBarrierAll2PEs reports the same with -benchmem). AllocsPerRun
// runs on one CPU, so every call also takes the slow way of its wait
// (registered, sleeping on the bell): that allocates nothing either.
// Eager delivery only: CI skips it under SHMEM_SIM_DELIVERY=lazy, whose
// held writes are copies.
func TestBarrierAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's sync.Pool drops timers at random (see raceEnabled)")
	}
	run(t, 2, func(p *shmem.PE) error {
		team, err := p.TeamWorld().SplitStrided(0, 1, 2)
		if err != nil {
			return err
		}
		for _, c := range []struct {
			name string
			call func() error
		}{{"BarrierAll", p.BarrierAll}, {"SyncAll", p.SyncAll}, {"Team.Barrier", team.Barrier}, {"Team.Sync", team.Sync}} {
			var callErr error
			allocs := testing.AllocsPerRun(200, func() {
				if err := c.call(); err != nil && callErr == nil {
					callErr = err
				}
			})
			if callErr != nil {
				return callErr
			}
			if allocs != 0 {
				return fmt.Errorf("%s: %v allocations per call, want 0", c.name, allocs)
			}
		}
		return nil
	})
}
