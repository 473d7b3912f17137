package coll

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goshmem/shmem/internal/errs"
)

// splitQuitter is the PE of the split tests that gives the split up.
const splitQuitter = 2

// giveUpSplit makes PE splitQuitter of w give up its split once the
// round has completed at the coordinator (its reply came too late for its
// operation timeout) and after before returns; the others' agreement
// returns once after returns.
func giveUpSplit(w *fakeWorld, before, after func()) {
	for r, rt := range w.rts {
		rt.agreeHook = func(op string, all [][]byte, err error) ([][]byte, error) {
			if r != splitQuitter {
				after()
				return all, err
			}
			before()
			return nil, errs.New(op, r, errs.NoPE, errs.ErrTimeout, "operation timeout (test)")
		}
	}
}

// wantNamesQuitter checks that err is ErrPEFailed naming PE splitQuitter
// and its split.
func wantNamesQuitter(t *testing.T, r int, what string, err error) {
	t.Helper()
	var e *errs.Error
	if !errors.Is(err, errs.ErrPEFailed) || !errors.As(err, &e) || e.Target != splitQuitter ||
		!strings.Contains(err.Error(), "PE 2 gave up operation 1 (Split) of team world") {
		t.Errorf("PE %d: %s: %v, want ErrPEFailed naming PE 2 and the split it gave up", r, what, err)
	}
}

// TestSplitGivenUpFailsTheOthers: PE 2's split of TeamWorld times out
// after its proposal reached the coordinator, so the round completes for
// the others; PE 2 gives TeamWorld up before their replies are read.
// Their split fails naming PE 2 (it used to return a team with PE 2 in
// it, which PE 2 never made).
func TestSplitGivenUpFailsTheOthers(t *testing.T) {
	const n = 4
	w := newFakeWorld(t, n)
	teams := w.worlds(t)
	quit := make(chan struct{})
	giveUpSplit(w, func() {}, func() { <-quit })
	got := w.each(func(r int) error {
		nt, err := teams[r].SplitStrided(0, 1, n)
		if r == splitQuitter {
			close(quit)
		}
		if err == nil && nt == nil {
			return errors.New("no team and no error")
		}
		return err
	})
	if !errors.Is(got[splitQuitter], errs.ErrTimeout) {
		t.Errorf("PE 2 (gives up): %v, want ErrTimeout", got[splitQuitter])
	}
	for r, err := range got {
		if r != splitQuitter {
			wantNamesQuitter(t, r, "SplitStrided", err)
		}
	}
}

// TestTeamWithoutAMemberFails: as above, but the others' splits return
// before PE 2 gives up (its quit words reach them too late): they hold a
// team that names PE 2, which never made it. Their first operation on it
// (a Barrier, or Destroy, which took a member's zeroed word for a
// completed Destroy) fails naming PE 2 instead of waiting for it until it
// finalizes.
func TestTeamWithoutAMemberFails(t *testing.T) {
	const n = 4
	for _, call := range []string{"Barrier", "Destroy"} {
		t.Run(call, func(t *testing.T) {
			w := newFakeWorld(t, n)
			teams := w.worlds(t)
			var split sync.WaitGroup
			split.Add(n - 1)
			giveUpSplit(w, split.Wait, func() {})
			done := make(chan []error)
			go func() {
				done <- w.each(func(r int) error {
					nt, err := teams[r].SplitStrided(0, 1, n)
					if r == splitQuitter {
						return err
					}
					split.Done()
					if err != nil {
						return err
					}
					if call == "Barrier" {
						return nt.Barrier()
					}
					return nt.Destroy()
				})
			}()
			var got []error
			select {
			case got = <-done:
			case <-time.After(time.Minute): // a watchdog, not a timing: it took milliseconds
				t.Fatalf("%s on a team without PE 2 still waits for it after a minute", call)
			}
			if !errors.Is(got[splitQuitter], errs.ErrTimeout) {
				t.Errorf("PE 2 (gives up): %v, want ErrTimeout", got[splitQuitter])
			}
			for r, err := range got {
				if r != splitQuitter {
					wantNamesQuitter(t, r, call, err)
				}
			}
		})
	}
}
