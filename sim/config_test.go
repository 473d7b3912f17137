package sim_test

import (
	"errors"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/internal/failcheck"
	"github.com/goshmem/shmem/sim"
)

// TestMeasureDeadlockDetected: Measure and MeasureSteps run the deadlock
// detector with Run's default grace; they used to run without it and
// never returned from a lock deadlock.
func TestMeasureDeadlockDetected(t *testing.T) {
	_, err := sim.Measure(3, failcheck.LockDeadlock)
	if !errors.Is(err, shmem.ErrDeadlock) || !contains(err.Error(), "held by PE 1") {
		t.Fatalf("Measure: %v, want ErrDeadlock naming the lock's holder", err)
	}
	_, err = sim.MeasureSteps(3, []func(*shmem.PE) error{failcheck.LockDeadlock})
	if !errors.Is(err, shmem.ErrDeadlock) {
		t.Fatalf("MeasureSteps: %v, want ErrDeadlock", err)
	}
}

// TestDeadlockGraceZeroIsDefault: WithDeadlockGrace(0) is the default
// grace, as its doc says; only a negative one turns the detector off.
func TestDeadlockGraceZeroIsDefault(t *testing.T) {
	err := sim.Run(3, failcheck.WaitForever, sim.WithDelivery(sim.Eager), sim.WithDeadlockGrace(0))
	if !errors.Is(err, shmem.ErrDeadlock) {
		t.Fatalf("got %v, want ErrDeadlock", err)
	}
}

// TestWithModelRefusesBadCosts: WithModel checks a model as LoadModel
// checks a file: Run and Measure fail naming the option and the cost,
// and no PE runs.
func TestWithModelRefusesBadCosts(t *testing.T) {
	cases := map[string]func(m *sim.Model){
		"intra latency_ns NaN":          func(m *sim.Model) { m.Intra.Latency = math.NaN() },
		"intra overhead_ns -1000":       func(m *sim.Model) { m.Intra.Overhead = -1000 },
		"inter gap_ns +Inf":             func(m *sim.Model) { m.Inter.Gap = math.Inf(1) },
		"inter per_byte_ns 1e+20":       func(m *sim.Model) { m.Inter.PerByte = 1e20 },
		"cores_per_node -2 is negative": func(m *sim.Model) { m.Cores = -2 },
	}
	for want, spoil := range cases {
		m := sim.ModelSHM()
		spoil(&m)
		var ran atomic.Int32
		body := func(p *shmem.PE) error { ran.Add(1); return p.BarrierAll() }
		_, merr := sim.Measure(2, body, sim.WithModel(m))
		rerr := sim.Run(2, body, sim.WithModel(m))
		for name, err := range map[string]error{"Measure": merr, "Run": rerr} {
			if !errors.Is(err, shmem.ErrInvalidArgument) || !contains(err.Error(), "sim.WithModel") || !contains(err.Error(), want) {
				t.Errorf("%s with %s: %v, want ErrInvalidArgument naming sim.WithModel and %q", name, want, err, want)
			}
		}
		if ran.Load() != 0 {
			t.Errorf("%s: the program ran on %d PEs", want, ran.Load())
		}
	}
}

// TestOptionsRefuseBadArguments: an option whose argument the world
// cannot honour fails Run and Measure before any PE runs, naming the
// option and the value, instead of being ignored (a fault on a PE that
// does not exist injected nothing, and the test passed untested).
func TestOptionsRefuseBadArguments(t *testing.T) {
	cases := []struct {
		npes int
		opt  sim.Option
		want []string
	}{
		{2, sim.WithFailure(7, 1), []string{"sim.WithFailure", "PE 7", "2 PEs"}},
		{2, sim.WithFailure(-1, 1), []string{"sim.WithFailure", "PE -1"}},
		{2, sim.WithFailure(0, -3), []string{"sim.WithFailure", "-3 calls"}},
		{2, sim.WithSlowPE(7, 2), []string{"sim.WithSlowPE", "PE 7"}},
		{2, sim.WithSlowPE(0, 0), []string{"sim.WithSlowPE", "factor 0"}},
		{2, sim.WithSlowPE(0, -1), []string{"sim.WithSlowPE", "factor -1"}},
		{2, sim.WithSlowPE(0, math.NaN()), []string{"sim.WithSlowPE", "factor NaN"}},
		{3, sim.WithLinkDown(0, 9), []string{"sim.WithLinkDown", "PE 9", "3 PEs"}},
		{3, sim.WithLinkDown(1, 1), []string{"sim.WithLinkDown", "PE 1 and PE 1"}},
		{2, sim.WithNodeOf(func(int) int { return -1 }), []string{"sim.WithNodeOf", "node -1 for PE 0"}},
		{2, sim.WithNodes(0), []string{"sim.WithNodes", "0 PEs per node"}},
		{2, sim.WithDelivery(sim.Delivery(9)), []string{"sim.WithDelivery", "delivery 9"}},
		{2, sim.WithOpTimeout(-time.Second), []string{"sim.WithOpTimeout", "-1s"}},
		{2, sim.WithTimeout(-time.Second), []string{"sim.WithTimeout", "-1s"}},
	}
	for _, c := range cases {
		var ran atomic.Int32
		body := func(p *shmem.PE) error { ran.Add(1); return p.BarrierAll() }
		rerr := sim.Run(c.npes, body, c.opt)
		_, merr := sim.Measure(c.npes, body, c.opt)
		for name, err := range map[string]error{"Run": rerr, "Measure": merr} {
			if !errors.Is(err, shmem.ErrInvalidArgument) {
				t.Errorf("%s %v: %v, want ErrInvalidArgument", name, c.want, err)
				continue
			}
			for _, w := range c.want {
				if !contains(err.Error(), w) {
					t.Errorf("%s: %q does not say %q", name, err, w)
				}
			}
		}
		if ran.Load() != 0 {
			t.Errorf("%v: the program ran on %d PEs", c.want, ran.Load())
		}
	}
}

// TestNilFunctionRefused: a nil function is an error, not every PE's
// panic.
func TestNilFunctionRefused(t *testing.T) {
	if err := sim.Run(2, nil); !errors.Is(err, shmem.ErrInvalidArgument) || !contains(err.Error(), "function is nil") {
		t.Errorf("Run(2, nil): %v, want ErrInvalidArgument", err)
	}
	if _, err := sim.Measure(2, nil); !errors.Is(err, shmem.ErrInvalidArgument) {
		t.Errorf("Measure(2, nil): %v, want ErrInvalidArgument", err)
	}
}

// TestOptionsAcceptEdges: the least valid arguments still run.
func TestOptionsAcceptEdges(t *testing.T) {
	body := func(p *shmem.PE) error { return p.BarrierAll() }
	err := sim.Run(3, body, sim.WithSlowPE(2, 1), sim.WithLinkDown(0, 2), sim.WithFailure(2, 1000),
		sim.WithNodes(1), sim.WithNodeOf(func(r int) int { return r }), sim.WithSeed(1))
	if err != nil {
		t.Fatal(err)
	}
}
