package sim_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/sim"
)

// TestModelPutQuiet: one 8-byte P and a Quiet under ModelTCP() cost the
// overhead, the bytes, the latency there and the ack's latency back:
// 1200 + 8/5.348 + 2·5000 ns, BENCHMARKS.md's 11.23 µs within 0.3%.
func TestModelPutQuiet(t *testing.T) {
	measure := func(put bool) sim.Report {
		rep, err := sim.Measure(2, func(p *shmem.PE) error {
			x, err := shmem.Calloc[int64](p, 1) // ends in a barrier
			if err != nil || p.MyPE() != 0 || !put {
				return err
			}
			if err := shmem.P(p, x, 1, 1); err != nil {
				return err
			}
			return p.Quiet()
		}, sim.WithModel(sim.ModelTCP()))
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	base, rep := measure(false), measure(true)
	want := 11201 * time.Nanosecond // 1200 + 8/5.348 + 2·5000, truncated
	if got := rep.PE[0] - base.PE[0]; got < want || got > want+time.Nanosecond || rep.PE[1] != base.PE[1] {
		t.Fatalf("P+Quiet took %v on PE 0 (want %v) and moved PE 1 from %v to %v", got, want, base.PE[1], rep.PE[1])
	}
	var put int64
	for _, l := range rep.Links {
		if l.From == 0 && l.To == 1 {
			put += l.Messages
		}
	}
	for _, l := range base.Links {
		if l.From == 0 && l.To == 1 {
			put -= l.Messages
		}
	}
	if put != 1 {
		t.Fatalf("P sent %d messages from PE 0 to PE 1, want 1", put)
	}
}

func barriers(k int) func(p *shmem.PE) error {
	return func(p *shmem.PE) error {
		for i := 0; i < k; i++ {
			if err := p.BarrierAll(); err != nil {
				return err
			}
		}
		return nil
	}
}

// TestModelBarrierScales: a dissemination barrier takes ceil(log2 n)
// rounds, each a message's overhead, latency and the waiter's wake-up, so
// its time grows by one round each time n doubles.
func TestModelBarrierScales(t *testing.T) {
	m := sim.ModelSHM().Intra
	// The round's message is an 8-byte atomic add.
	round := m.Overhead + 8*m.PerByte + m.Latency + m.Wake
	for _, c := range []struct{ n, rounds int }{{2, 1}, {4, 2}, {8, 3}, {64, 6}} {
		rep, err := sim.Measure(c.n, barriers(10), sim.WithHeapSize(1<<20))
		if err != nil {
			t.Fatal(err)
		}
		want := time.Duration(10 * float64(c.rounds) * round)
		if rep.Elapsed != want {
			t.Errorf("%d PEs: 10 barriers took %v, want %v (%d rounds of %v)", c.n, rep.Elapsed, want, c.rounds, round)
		}
	}
}

// TestModelDeterministic: a model fixes the schedule whatever the seed.
func TestModelDeterministic(t *testing.T) {
	prog := func(p *shmem.PE) error {
		src, _ := shmem.Calloc[int64](p, 4)
		dst, err := shmem.Calloc[int64](p, 4*p.NPEs())
		if err != nil {
			return err
		}
		return shmem.FCollect(p.TeamWorld(), dst, src)
	}
	a, err := sim.Measure(6, prog, sim.WithSeed(1))
	if err != nil {
		t.Fatal(err)
	}
	b, err := sim.Measure(6, prog, sim.WithSeed(2), sim.WithDelivery(sim.Lazy))
	if err != nil {
		t.Fatal(err)
	}
	if a.Elapsed != b.Elapsed || a.Elapsed == 0 {
		t.Fatalf("elapsed %v vs %v", a.Elapsed, b.Elapsed)
	}
}

// TestModelNodesAndSlowPE: inter-node links cost what Inter says, and a
// slow PE stretches the barrier everyone waits for.
func TestModelNodesAndSlowPE(t *testing.T) {
	m := sim.Model{Name: "two-level",
		Intra: sim.Params{Latency: 10, Overhead: 10, Wake: 100},
		Inter: sim.Params{Latency: 1000, Overhead: 10, Wake: 100}}
	one, err := sim.Measure(2, barriers(1), sim.WithModel(m))
	if err != nil {
		t.Fatal(err)
	}
	two, err := sim.Measure(2, barriers(1), sim.WithModel(m), sim.WithNodes(1))
	if err != nil {
		t.Fatal(err)
	}
	if one.Elapsed != 120 || two.Elapsed != 1110 {
		t.Fatalf("one node %v, two nodes %v; want 120ns, 1.11µs", one.Elapsed, two.Elapsed)
	}
	slow, err := sim.Measure(2, barriers(1), sim.WithModel(m), sim.WithSlowPE(1, 4))
	if err != nil {
		t.Fatal(err)
	}
	// PE 1's overhead and wake-up cost 4x: it sends at 40, PE 0 wakes at
	// 40+10+100 = 150; PE 1 wakes at 10+10+400 = 420.
	if slow.PE[0] != 150 || slow.PE[1] != 420 {
		t.Fatalf("slow PE 1: times %v, want [150ns 420ns]", slow.PE)
	}
}

// TestModelLinkDownRelays: a lost link still delivers, a hop later.
func TestModelLinkDownRelays(t *testing.T) {
	m := sim.Model{Intra: sim.Params{Latency: 100, Overhead: 10, Wake: 0}, Inter: sim.Params{Latency: 100, Overhead: 10}}
	rep, err := sim.Measure(2, barriers(1), sim.WithModel(m), sim.WithLinkDown(0, 1))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Elapsed != 220 {
		t.Fatalf("barrier over a relayed link took %v, want 220ns (10 + 2·100 + 10)", rep.Elapsed)
	}
}

// TestLoadModel reads a model file and refuses a malformed one.
func TestLoadModel(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "m.json")
	b, _ := json.Marshal(sim.ModelTCP())
	if err := os.WriteFile(good, b, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := sim.LoadModel(good)
	if err != nil || m != sim.ModelTCP() {
		t.Fatalf("LoadModel = %+v, %v; want ModelTCP()", m, err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"intra":{"latency_us":3}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := sim.LoadModel(bad); err == nil {
		t.Fatal("LoadModel accepted an unknown field")
	}
}

// TestMeasureSteps: each step's time is the slowest PE's progress over it.
func TestMeasureSteps(t *testing.T) {
	m := sim.ModelSHM().Intra
	round := time.Duration(m.Overhead + 8*m.PerByte + m.Latency + m.Wake)
	rep, err := sim.MeasureSteps(4, []func(*shmem.PE) error{barriers(1), barriers(3)})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Steps) != 2 || rep.Steps[0] != 2*round || rep.Steps[1]-6*round > 2 || 6*round-rep.Steps[1] > 2 {
		t.Fatalf("steps %v, want [%v ~%v] (2 and 6 rounds)", rep.Steps, 2*round, 6*round)
	}
}
