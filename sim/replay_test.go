package sim_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/sim"
)

// ringAndReduce is a small program with puts, atomics, a collective and
// a lock: enough choices for two schedules to differ.
func ringAndReduce(p *shmem.PE) error {
	me, np := p.MyPE(), p.NPEs()
	s, _ := shmem.Calloc[int64](p, 8)
	sum, _ := shmem.Calloc[int64](p, 8)
	ctr, err := shmem.Calloc[int64](p, 1)
	if err != nil {
		return err
	}
	for i := 0; i < 3; i++ {
		if err := shmem.PutNBI(p, s.Slice(i, i+1), []int64{int64(me + i)}, (me+1)%np); err != nil {
			return err
		}
		if err := shmem.AtomicAdd(p, ctr, 1, 0); err != nil {
			return err
		}
	}
	if err := p.BarrierAll(); err != nil {
		return err
	}
	return shmem.Reduce(p.TeamWorld(), shmem.OpSum, sum, s)
}

// TestReplay: the same seed writes the same trace, run after run, and a
// different seed a different one.
func TestReplay(t *testing.T) {
	trace := func(seed int64) []byte {
		var b bytes.Buffer
		if err := sim.Run(4, ringAndReduce, sim.WithDelivery(sim.Lazy), sim.WithSeed(seed), sim.WithTrace(&b)); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	a := trace(11)
	if len(a) == 0 {
		t.Fatal("empty trace")
	}
	for i := 0; i < 3; i++ {
		if b := trace(11); !bytes.Equal(a, b) {
			t.Fatalf("run %d of seed 11 differs: %d vs %d bytes", i+2, len(a), len(b))
		}
	}
	if bytes.Equal(a, trace(12)) {
		t.Fatal("seeds 11 and 12 wrote the same trace")
	}
}

// TestReplayFromError: a failing run without a seed names one, and
// rerunning with it fails the same way.
func TestReplayFromError(t *testing.T) {
	t.Setenv("SHMEM_SIM_SEED", "") // CI sets one for the whole process
	for i := 0; i < 30; i++ {
		err := sim.Run(2, missingQuiet, sim.WithDelivery(sim.Lazy))
		if err == nil {
			continue
		}
		var seed int64
		msg := err.Error()
		at := strings.Index(msg, "sim.WithSeed(")
		if at < 0 {
			t.Fatalf("error names no seed: %v", err)
		}
		if _, serr := fmt.Sscanf(msg[at:], "sim.WithSeed(%d)", &seed); serr != nil {
			t.Fatalf("seed in %q: %v", msg, serr)
		}
		again := sim.Run(2, missingQuiet, sim.WithDelivery(sim.Lazy), sim.WithSeed(seed))
		if again == nil || again.Error() != msg {
			t.Fatalf("seed %d replayed as %v, first run %v", seed, again, err)
		}
		return
	}
	t.Fatal("30 unseeded Lazy runs of a program missing a Quiet all passed")
}
