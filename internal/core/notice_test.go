package core

import (
	"errors"
	"testing"
	"time"

	"github.com/goshmem/shmem/internal/errs"
)

// finalizeSleeps starts Finalize on PEs 0 and 1 of a 3-PE world and
// returns the first sleep each one's agreement armed after its first look
// (PE 2 has not called Finalize, so neither can be answered before), and
// the channel their Finalize errors arrive on.
func finalizeSleeps(t *testing.T, w *LocalWorld) ([]time.Duration, chan error) {
	t.Helper()
	sleeps := make(chan time.Duration, 2)
	for _, p := range w.PEs[:2] {
		first := true
		p.s.agreeSleeps = func(d time.Duration) {
			if first {
				first = false
				sleeps <- d
			}
		}
	}
	done := make(chan error, 2)
	for _, p := range w.PEs[:2] {
		go func() { done <- p.Finalize() }()
	}
	return []time.Duration{<-sleeps, <-sleeps}, done
}

// TestFinalizeWaitSleepsUntilAnEvent: a PE waiting in Finalize's agreement
// has nothing to check, so after its first look it sleeps until the
// agreement's timeout or an event (the answer, a notice), not on a tick:
// with every PE of a world of 16384 waiting there, a 10 ms tick was most
// of the CPU. Each waiter arms one sleep, as long as the time the
// coordinator has left (10 minutes by default), and the world still ends
// when the last PE arrives.
func TestFinalizeWaitSleepsUntilAnEvent(t *testing.T) {
	w := localWorld(t, 3)
	sleeps, done := finalizeSleeps(t, w)
	for _, d := range sleeps {
		if d < 9*time.Minute {
			t.Errorf("a PE in Finalize's agreement sleeps %v between looks, want the coordinator's time left (about 10m)", d)
		}
	}
	if err := w.PEs[2].Finalize(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// TestAgreementWokenByNotice: a waiter asleep in an agreement wakes for a
// change of its PE's state (here the deadlock verdict, which no
// coordinator answers) and ends with it, not at the agreement's timeout.
func TestAgreementWokenByNotice(t *testing.T) {
	w := localWorld(t, 3)
	_, done := finalizeSleeps(t, w)
	verdict := errs.New("sim", errs.NoPE, errs.NoPE, errs.ErrDeadlock, "test verdict")
	w.PEs[0].Abort(verdict)
	w.PEs[1].Abort(verdict)
	for range 2 {
		if err := <-done; !errors.Is(err, errs.ErrDeadlock) {
			t.Fatalf("Finalize after the verdict: %v, want ErrDeadlock", err)
		}
	}
}
