package sim_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/sim"
)

// TestFailureSweepEnds: as WithFailure documents, a sweep over afterOps
// kills the PE at each count until the first at which Run succeeds (the
// PE makes no more calls than that, Finalize's included), and never after.
func TestFailureSweepEnds(t *testing.T) {
	body := func(p *shmem.PE) error {
		s, err := shmem.Calloc[int64](p, 4)
		if err != nil {
			return err
		}
		for i := range 4 {
			if err := shmem.P(p, s.Slice(i, i+1), int64(i), 1-p.MyPE()); err != nil {
				return err
			}
		}
		return p.BarrierAll()
	}
	end := -1
	for k := 0; k < 1000; k++ {
		err := sim.Run(2, body, sim.WithSeed(1), sim.WithFailure(1, k))
		if err == nil {
			end = k
			break
		}
		if !errors.Is(err, shmem.ErrPEFailed) || !strings.Contains(err.Error(), "killed by sim.WithFailure") {
			t.Fatalf("afterOps %d: %v, want PE 1 killed", k, err)
		}
	}
	if end < 5 {
		t.Fatalf("the sweep ended at %d calls: PE 1 makes at least 5", end)
	}
	for k := end; k < end+3; k++ {
		if err := sim.Run(2, body, sim.WithSeed(1), sim.WithFailure(1, k)); err != nil {
			t.Fatalf("afterOps %d, past the sweep's end %d: %v", k, end, err)
		}
	}
}
