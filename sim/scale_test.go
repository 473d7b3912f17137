package sim_test

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/sim"
)

// TestScale runs the scale workloads under ModelSHM(), 64 PEs a
// node: on 4096 PEs a barrier, an FCollect of 8 B per PE and a Reduce of
// 1 KiB; on 16384 PEs a barrier alone. They take tens of seconds and
// gigabytes (BENCHMARKS.md), so they run only when asked for, and never
// under the race detector: SHMEM_SIM_SCALE=issue runs both,
// SHMEM_SIM_SCALE=n runs the full workload on n PEs and
// SHMEM_SIM_SCALE=nb the barrier alone on n.
func TestScale(t *testing.T) {
	v := os.Getenv("SHMEM_SIM_SCALE")
	if v == "" || testing.Short() || raceEnabled {
		t.Skip("set SHMEM_SIM_SCALE=issue (or 4096, or 16384b) to run, without -race or -short")
	}
	cases := strings.Split(v, ",")
	if v == "issue" {
		cases = []string{"4096", "16384b"}
	}
	for _, c := range cases {
		n, err := strconv.Atoi(strings.TrimSuffix(c, "b"))
		if err != nil || n < 2 {
			t.Fatalf("SHMEM_SIM_SCALE=%s: want issue, a PE count, or a PE count and b", v)
		}
		t.Run(c, func(t *testing.T) { scale(t, n, strings.HasSuffix(c, "b")) })
	}
}

// scale runs one workload of TestScale on n PEs and checks every PE took
// part in each call Report.Calls lists.
func scale(t *testing.T, n int, barrierOnly bool) {
	steps := []func(*shmem.PE) error{func(p *shmem.PE) error { return p.BarrierAll() }}
	ops := []string{"BarrierAll"}
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
		ops = []string{"Calloc", "BarrierAll", "FCollect", "Reduce"} // Calloc ends in a sync, listed as Calloc
	}
	heap := 8*(1+n+256) + 64*n + 1<<20
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	rep, err := sim.MeasureSteps(n, steps, sim.WithHeapSize(heap), sim.WithNodes(64))
	wall := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if len(rep.Calls) != len(ops) {
		t.Fatalf("%d calls %+v, want %v", len(rep.Calls), rep.Calls, ops)
	}
	for i, c := range rep.Calls {
		if c.Op != ops[i] || c.PEs != n || c.Time <= 0 {
			t.Errorf("call %d: %+v, want %s by all %d PEs", i, c, ops[i], n)
		}
	}
	// Sys is what the Go runtime took from the OS, never given back
	// within a run: about the peak. The heaps' pages come on top of it
	// (heap.ReserveRegion maps them outside the Go heap).
	t.Logf("%d PEs: steps %v, calls %v, elapsed %v (virtual); %v wall, Go runtime memory %.2f GiB",
		n, rep.Steps, callTimes(rep.Calls), rep.Elapsed, wall.Round(time.Millisecond), float64(after.Sys-before.Sys)/(1<<30))
}

func callTimes(cs []sim.Call) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Op + " " + c.Time.String()
	}
	return out
}
