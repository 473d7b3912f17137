package sim_test

import (
	"testing"
	"time"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/sim"
)

// TestReportCalls: Report.Calls times every collective call from the
// model's costs. Under a model of 10 ns overhead and latency and 100 ns
// wake-up, a dissemination round costs 120 ns, so a barrier or sync of 4
// PEs (two rounds) costs 240 ns once its last member is in. PE 0's
// put+Quiet before the second barrier (10 + 2·10 ns) makes it enter 30 ns
// after the others, which the call reports as its skew; the others' first
// round is then under way, so that call costs less once PE 0 is in.
func TestReportCalls(t *testing.T) {
	m := sim.Model{Name: "flat", Intra: sim.Params{Latency: 10, Overhead: 10, Wake: 100}, Inter: sim.Params{Latency: 10, Overhead: 10, Wake: 100}}
	rep, err := sim.Measure(4, func(p *shmem.PE) error {
		x, err := shmem.Calloc[int64](p, 1) // ends in a sync, listed as Calloc
		if err != nil {
			return err
		}
		if err := p.BarrierAll(); err != nil {
			return err
		}
		if p.MyPE() == 0 {
			if err := shmem.P(p, x, 1, 1); err != nil {
				return err
			}
			if err := p.Quiet(); err != nil {
				return err
			}
		}
		if err := p.BarrierAll(); err != nil {
			return err
		}
		return p.SyncAll()
	}, sim.WithModel(m), sim.WithHeapSize(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	const round = 120 * time.Nanosecond
	ops := []string{"Calloc", "BarrierAll", "BarrierAll", "SyncAll"}
	if len(rep.Calls) != len(ops) {
		t.Fatalf("calls %+v, want %v", rep.Calls, ops)
	}
	for i, c := range rep.Calls {
		if c.Op != ops[i] || c.Team != "world" || c.PEs != 4 || (i > 0 && c.Seq != rep.Calls[i-1].Seq+1) {
			t.Errorf("call %d: %+v, want %s on world by 4 PEs, numbered in order", i, c, ops[i])
		}
		if c.Time != c.End-c.Start {
			t.Errorf("call %d: time %v is not end %v - start %v", i, c.Time, c.End, c.Start)
		}
	}
	c := rep.Calls
	for _, i := range []int{0, 1} {
		if c[i].Time != 2*round || c[i].Skew != 0 {
			t.Errorf("call %d (%s): time %v, skew %v; want %v, 0", i, c[i].Op, c[i].Time, c[i].Skew, 2*round)
		}
	}
	if c[2].Skew != 30 || c[2].Start != c[1].End+30 || c[2].Time >= 2*round || c[2].Time < 2*round-30 {
		t.Errorf("skewed barrier: %+v; want skew 30ns from %v and a time in [%v, %v)", c[2], c[1].End, 2*round-30, 2*round)
	}
	if c[3].Start != c[2].End || c[3].Time != 2*round || rep.Elapsed != c[3].End {
		t.Errorf("last sync %+v, elapsed %v; want it to start at %v, take %v and end the run", c[3], rep.Elapsed, c[2].End, 2*round)
	}
}

// TestReportNamesAllocations: the synchronization that ends Calloc and
// Realloc is listed under the call the program made, not as a SyncAll it
// never called.
func TestReportNamesAllocations(t *testing.T) {
	rep, err := sim.Measure(2, func(p *shmem.PE) error {
		x, err := shmem.Calloc[int64](p, 1)
		if err != nil {
			return err
		}
		if _, err := shmem.Realloc(p, x, 4); err != nil {
			return err
		}
		return p.SyncAll()
	})
	if err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, c := range rep.Calls {
		ops = append(ops, c.Op)
	}
	if len(ops) != 3 || ops[0] != "Calloc" || ops[1] != "Realloc" || ops[2] != "SyncAll" {
		t.Fatalf("Calls name %v, want [Calloc Realloc SyncAll]", ops)
	}
}
