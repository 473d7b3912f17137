package main

import (
	"fmt"
	"testing"

	"github.com/goshmem/shmem"
	lt "github.com/goshmem/shmem/internal/launch/launchtest"
)

// allocRuns is how many calls each count averages over: every PE makes
// the same calls, so they pair up.
const allocRuns = 1000

// allocs prints the allocations per call of each barrier and collective,
// counted in this process while its peers are other processes: what the
// steady state of the call itself allocates on the world's paths (shared
// memory, or TCP with SHMEM_TRANSPORT=tcp). A rare allocation (a wait's
// timer the runtime's pool dropped, say) does not count: AllocsPerRun's
// mean is a whole number, so a per-call allocation shows as 1 or more.
func allocs(p *shmem.PE) error {
	n := p.NPEs()
	w := p.TeamWorld()
	team, err := w.SplitStrided(0, 1, n)
	if err != nil {
		return err
	}
	src, err := shmem.Calloc[int64](p, 4*n)
	if err != nil {
		return err
	}
	dst, err := shmem.Calloc[int64](p, 4*n)
	if err != nil {
		return err
	}
	one, out := src.Slice(0, 1), dst.Slice(0, 1)
	calls := []struct {
		name string
		call func() error
	}{
		{"BarrierAll", p.BarrierAll},
		{"SyncAll", p.SyncAll},
		{"Team.Barrier", team.Barrier},
		{"Team.Sync", team.Sync},
		{"Broadcast", func() error { return shmem.Broadcast(w, out, one, 0) }},
		{"FCollect", func() error { return shmem.FCollect(w, dst.Slice(0, n), one) }},
		{"Collect", func() error { return shmem.Collect(w, dst, src.Slice(0, p.MyPE()+1)) }},
		{"Alltoall", func() error { return shmem.Alltoall(w, dst.Slice(0, n), src.Slice(0, n)) }},
		{"Alltoalls", func() error { return shmem.Alltoalls(w, dst, src, 1, 2, 2) }},
		{"Reduce", func() error { return shmem.Reduce(w, shmem.OpSum, out, one) }},
		{"Team.Reduce", func() error { return shmem.Reduce(team, shmem.OpMax, out, one) }},
		{"mixed", func() error { // one of each in turn, as a program makes them
			if err := shmem.Broadcast(w, out, one, 0); err != nil {
				return err
			}
			if err := shmem.Reduce(team, shmem.OpSum, out, one); err != nil {
				return err
			}
			if err := shmem.FCollect(w, dst.Slice(0, n), one); err != nil {
				return err
			}
			return p.BarrierAll()
		}},
	}
	for _, c := range calls {
		var callErr error
		allocs := testing.AllocsPerRun(allocRuns, func() {
			if err := c.call(); err != nil && callErr == nil {
				callErr = err
			}
		})
		if callErr != nil {
			return fmt.Errorf("%s: %w", c.name, callErr)
		}
		fmt.Printf("%s%s=%v\n", lt.AllocsLine, c.name, allocs)
	}
	fmt.Printf("%sDONE\n", lt.AllocsLine)
	return team.Destroy()
}
