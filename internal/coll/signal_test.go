package coll

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestSignalledMembersAreRung: members on mapped paths signal each other
// with plain stores (signalAndWait), and a member asleep on its bell is
// woken by the ring that follows, not by its sleep running out. Members
// enter Barrier one at a time, each once the previous one waits, in
// worlds of 2 and 3 (where a member also waits on one that has not come
// while the one it signalled sleeps); a sleep that ran out instead of a ring
// (a minute each here, which no ring takes) fails the test.
func TestSignalledMembersAreRung(t *testing.T) {
	for _, n := range []int{2, 3} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			w := newFakeWorld(t, n)
			teams := w.worlds(t)
			if _, ok := w.rts[0].paths[1].(signaler); !ok {
				t.Fatal("fakenet's paths do not signal with stores (udma.Path's SignalWord)")
			}
			waiting := make([]chan struct{}, n)
			for r, rt := range w.rts {
				waiting[r] = make(chan struct{})
				rt.sleep = time.Minute
				first := true
				rt.waitHook = func(string, uint64) error {
					if first {
						first = false
						close(waiting[r])
					}
					return nil
				}
			}
			for round := 0; round < 3; round++ {
				errsOf := w.each(func(r int) error {
					if r > 0 && round == 0 {
						<-waiting[r-1]
					}
					return teams[r].Barrier()
				})
				if err := errors.Join(errsOf...); err != nil {
					t.Fatal(err)
				}
			}
			for r, rt := range w.rts {
				if k := rt.unrung.Load(); k != 0 {
					t.Errorf("PE %d: %d sleeps ran out unrung", r, k)
				}
			}
		})
	}
}
