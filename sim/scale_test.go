package sim_test

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/sim"
)

// TestScale runs the scale workload on SHMEM_SIM_SCALE PEs under
// ModelSHM(): barrier, FCollect of 8 B per PE and Reduce of 1 KiB, or the
// barrier alone with SHMEM_SIM_SCALE_BARRIER=1. It is skipped unless asked
// for: 4096 PEs take 25 s and 3.75 GB (BENCHMARKS.md).
func TestScale(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("SHMEM_SIM_SCALE"))
	if n < 2 {
		t.Skip("set SHMEM_SIM_SCALE=4096 to run")
	}
	barrierOnly := os.Getenv("SHMEM_SIM_SCALE_BARRIER") == "1"
	steps := []func(*shmem.PE) error{func(p *shmem.PE) error { return p.BarrierAll() }}
	if !barrierOnly {
		bufs := make([]shmem.Sym[int64], n)
		steps = []func(*shmem.PE) error{
			func(p *shmem.PE) error {
				var err error
				bufs[p.MyPE()], err = shmem.Calloc[int64](p, 1+n+256)
				return err
			},
			func(p *shmem.PE) error { return p.BarrierAll() },
			func(p *shmem.PE) error {
				b := bufs[p.MyPE()]
				return shmem.FCollect(p.TeamWorld(), b.Slice(1, 1+n), b.Slice(0, 1))
			},
			func(p *shmem.PE) error {
				b := bufs[p.MyPE()]
				return shmem.Reduce(p.TeamWorld(), shmem.OpSum, b.Slice(1+n+128, 1+n+256), b.Slice(1+n, 1+n+128))
			},
		}
	}
	heap := 8*(1+n+256) + 64*n + 1<<20
	start := time.Now()
	rep, err := sim.MeasureSteps(n, steps, sim.WithHeapSize(heap), sim.WithNodes(64))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d PEs: steps %v, elapsed %v (virtual), %v wall", n, rep.Steps, rep.Elapsed, time.Since(start).Round(time.Millisecond))
}
