package sim_test

import (
	"bytes"
	"testing"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/sim"
)

// pollWhileOthersWait: PE 1 waits for a word PE 0 sets once its own flag
// is set; PE 0 spins on Test for that flag, which PE 2 sets after 2000
// gets from PE 3. While PE 0 spins with nothing in flight, PE 1 waits.
func pollWhileOthersWait(p *shmem.PE) error {
	flag, err := shmem.Calloc[int64](p, 1)
	if err != nil {
		return err
	}
	done, err := shmem.Calloc[int64](p, 1)
	if err != nil {
		return err
	}
	switch p.MyPE() {
	case 0:
		for !shmem.Test(p, flag, shmem.CmpEQ, 1) {
		}
		if err := shmem.P(p, done, 1, 1); err != nil {
			return err
		}
	case 1:
		if err := shmem.WaitUntil(p, done, shmem.CmpEQ, 1); err != nil {
			return err
		}
	case 2:
		for range 2000 {
			if _, err := shmem.G(p, flag, 3); err != nil {
				return err
			}
		}
		if err := shmem.P(p, flag, 1, 0); err != nil {
			return err
		}
	}
	return p.BarrierAll()
}

// TestPollingReplays: a seed replays a program in which a PE spins on
// Test while another waits, trace for trace. The spinning PE ran a round
// of peer checks every 20 ms of real time, which fell at other points of
// the schedule in each run.
func TestPollingReplays(t *testing.T) {
	for seed := int64(1); seed <= 3; seed++ {
		var a, b bytes.Buffer
		for _, w := range []*bytes.Buffer{&a, &b} {
			if err := sim.Run(4, pollWhileOthersWait, sim.WithDelivery(sim.Lazy), sim.WithSeed(seed), sim.WithTrace(w)); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Errorf("seed %d: two runs wrote different traces (%d and %d bytes)", seed, a.Len(), b.Len())
		}
	}
}
