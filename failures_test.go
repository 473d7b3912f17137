package shmem_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/internal/failcheck"
	"github.com/goshmem/shmem/sim"
)

// TestFailureMatrix runs every scenario of the failure table on the
// simulator and checks what every PE got from the call and from its
// Finalize, what the errors say, and that the world ended (Run returned;
// the leak check of TestMain covers what it left). world's process tests
// run the same table on shared memory and TCP.
func TestFailureMatrix(t *testing.T) {
	for _, sc := range failcheck.Scenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			if sc.TimeoutOn != nil {
				t.Skip("the simulator gives every PE the same operation timeout (internal/core's TestGiveUpWakesAWaitWithoutTimeout holds its world to this case)")
			}
			got := make([]error, sc.NPEs)
			fins := make([]error, sc.NPEs)
			var opts []sim.Option
			if sc.Timeout > 0 {
				opts = append(opts, sim.WithOpTimeout(time.Duration(sc.Timeout)*time.Millisecond))
			}
			var mu sync.Mutex
			runErr := sim.Run(sc.NPEs, func(p *shmem.PE) error {
				err := sc.Body(p)
				fin := p.Finalize()
				mu.Lock()
				got[p.MyPE()], fins[p.MyPE()] = err, fin
				mu.Unlock()
				return nil
			}, opts...)
			for r := 0; r < sc.NPEs; r++ {
				if sc.Want(r) == "-" {
					continue
				}
				if c := failcheck.ClassOf(got[r]); c != sc.Want(r) {
					t.Errorf("PE %d got %v (%s), want %s", r, got[r], c, sc.Want(r))
				}
				if c := failcheck.ClassOf(fins[r]); c != sc.Fin(r) {
					t.Errorf("PE %d: Finalize returned %v (%s), want %s", r, fins[r], c, sc.Fin(r))
				}
				if got[r] != nil {
					if bad := failcheck.OneLine(got[r].Error()); bad != "" {
						t.Errorf("PE %d: %q %s", r, got[r], bad)
					}
				}
				if sc.Say != nil && got[r] != nil {
					for _, f := range sc.Say(r) {
						if !strings.Contains(got[r].Error(), f) {
							t.Errorf("PE %d: %q does not say %q", r, got[r], f)
						}
					}
				}
			}
			// Run reports a dead PE and a GlobalExit; otherwise the PEs
			// returned nil and so must Run.
			dead := false
			for r := 0; r < sc.NPEs; r++ {
				dead = dead || sc.Want(r) == "-"
			}
			switch {
			case strings.HasPrefix(string(sc.Want(0)), "Exit:"):
				if c := failcheck.ClassOf(runErr); c != sc.Want(0) {
					t.Errorf("Run returned %v, want %s", runErr, sc.Want(0))
				}
			case sc.SimRun != nil:
				if !errors.Is(runErr, shmem.ErrInvalidArgument) {
					t.Errorf("Run returned %v, want ErrInvalidArgument", runErr)
				}
				for _, f := range sc.SimRun {
					if runErr != nil && !strings.Contains(runErr.Error(), f) {
						t.Errorf("Run's error %q does not say %q", runErr, f)
					}
				}
			case dead:
				if runErr == nil || !strings.Contains(runErr.Error(), "panicked") {
					t.Errorf("Run returned %v, want the dead PE's failure", runErr)
				}
			case runErr != nil:
				t.Errorf("Run: %v", runErr)
			}
		})
	}
}

// TestGlobalExitAlwaysReported: a GlobalExit while the other PEs loop on
// BarrierAll ends the world, and Run says so, every time.
func TestGlobalExitAlwaysReported(t *testing.T) {
	for i := 0; i < 30; i++ {
		err := sim.Run(4, func(p *shmem.PE) error {
			for j := 0; ; j++ {
				if p.MyPE() == 1 && j == 2 {
					p.GlobalExit(5)
				}
				if err := p.BarrierAll(); err != nil {
					return err
				}
			}
		})
		if s, ok := shmem.ExitStatus(err); !ok || s != 5 {
			t.Fatalf("run %d: Run returned %v, want exit status 5", i, err)
		}
	}
}

// TestSurvivorErrors: when a PE panics or returns an error, every other
// PE's error names it with one line of reason, never the panic's stack;
// the failed PE's own error keeps the stack.
func TestSurvivorErrors(t *testing.T) {
	for _, how := range []string{"panic", "error"} {
		t.Run(how, func(t *testing.T) {
			got := make([]error, 4)
			runErr := sim.Run(4, func(p *shmem.PE) error {
				if p.MyPE() == 3 {
					if how == "panic" {
						panic("routing table corrupt")
					}
					return errors.New("routing table corrupt\nsecond line")
				}
				err := p.BarrierAll()
				got[p.MyPE()] = err
				return errors.Join(err, p.Finalize())
			})
			if runErr == nil {
				t.Fatal("Run returned nil")
			}
			for r := 0; r < 3; r++ {
				err := got[r]
				if !errors.Is(err, shmem.ErrPEFailed) {
					t.Fatalf("PE %d got %v, want ErrPEFailed", r, err)
				}
				msg := err.Error()
				if !strings.Contains(msg, "PE 3") || !strings.Contains(msg, "routing table corrupt") || !strings.Contains(msg, "BarrierAll") {
					t.Errorf("PE %d: %q does not name BarrierAll, PE 3 and the reason", r, msg)
				}
				if strings.Contains(msg, "\n") || strings.Contains(msg, "goroutine") || len(msg) > 400 {
					t.Errorf("PE %d: survivor's error is not one line: %q", r, msg)
				}
			}
			if how == "panic" && !strings.Contains(runErr.Error(), "goroutine") {
				t.Errorf("the panicking PE's own error lost its stack: %v", runErr)
			}
		})
	}
}

// TestMismatchNamesPEAndField: members that pass different arguments to
// one collective all fail, and the error says which field differs and who
// passed what.
func TestMismatchNamesPEAndField(t *testing.T) {
	run(t, 4, func(p *shmem.PE) error {
		src, err := shmem.Malloc[int64](p, 8)
		if err != nil {
			return err
		}
		dst, err := shmem.Malloc[int64](p, 8)
		if err != nil {
			return err
		}
		root := 0
		if p.MyPE() == 2 {
			root = 1
		}
		err = shmem.Broadcast(p.TeamWorld(), dst, src, root)
		return wantErr(err, shmem.ErrInvalidArgument, "Broadcast", "root: PEs 0-1, 3 passed 0, PE 2 passed 1")
	})
}

// TestOpTimeoutNamesCallAndPEs: with sim.WithOpTimeout, a BarrierAll that
// waits longer for a PE busy in its own code (not blocked in goshmem, so
// no deadlock) fails with ErrTimeout naming the call, the team and its
// PEs; the late PE and both Finalizes still end.
func TestOpTimeoutNamesCallAndPEs(t *testing.T) {
	if os.Getenv("SHMEM_SIM_DELIVERY") != "" || os.Getenv("SHMEM_SIM_SEED") != "" {
		// PE 1 waits on a Go channel, which the simulator's scheduler
		// cannot see: under it PE 1 would keep the turn and PE 0 never run.
		t.Skip("PEs that talk through a Go channel need the unscheduled simulator")
	}
	released := make(chan struct{})
	var got error
	err := sim.Run(2, func(p *shmem.PE) error {
		if p.MyPE() == 1 {
			<-released         // busy in user code until PE 0 gave up
			_ = p.BarrierAll() // PE 0 arrived, or finalized: either ends it
			return p.Finalize()
		}
		got = p.BarrierAll()
		close(released)
		return p.Finalize()
	}, sim.WithOpTimeout(50*time.Millisecond))
	// Run returned: the world ended. Its error is not checked: PE 0's
	// Finalize is bounded too, and a late PE 1 may make it time out.
	t.Logf("Run: %v", err)
	if !errors.Is(got, shmem.ErrTimeout) {
		t.Fatalf("PE 0's BarrierAll: %v, want ErrTimeout", got)
	}
	for _, f := range []string{"BarrierAll", "operation timeout", "team world", "PEs 0-1"} {
		if !strings.Contains(got.Error(), f) {
			t.Errorf("%q does not say %q", got, f)
		}
	}
}

// TestDeadlockListsEachPE: a world stuck in three different calls (PE 0
// waits for a lock PE 1 holds, PE 1 waits on a word nobody sets, PE 2 in
// a barrier the others never reach) ends with ErrDeadlock on every PE,
// the report saying what each is blocked in and on what: the lock and its
// PE, the word, the team operation and its PEs.
func TestDeadlockListsEachPE(t *testing.T) {
	err := sim.Run(3, func(p *shmem.PE) error {
		lock, err := shmem.Calloc[int64](p, 1)
		if err != nil {
			return err
		}
		flag, err := shmem.Calloc[int64](p, 1)
		if err != nil {
			return err
		}
		if p.MyPE() == 1 {
			if err := shmem.SetLock(p, lock); err != nil {
				return err
			}
		}
		if err := p.SyncAll(); err != nil { // PE 1 holds the lock from here
			return err
		}
		switch p.MyPE() {
		case 0:
			return shmem.SetLock(p, lock)
		case 1:
			return shmem.WaitUntil(p, flag, shmem.CmpEQ, 1)
		}
		return p.BarrierAll()
	})
	if !errors.Is(err, shmem.ErrDeadlock) {
		t.Fatalf("Run: %v, want ErrDeadlock", err)
	}
	for _, want := range []string{
		"PE 0 blocked in SetLock on the lock at heap offset", "of PE 0, held by PE 1",
		"PE 1 blocked in WaitUntil on its word at heap offset",
		"PE 2 blocked in BarrierAll on operation", "of team world with PEs 0-2",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the report does not say %q:\n%v", want, err)
		}
	}
}

// TestFinalizeAgainAfterTimeout: a PE whose Finalize timed out (PE 1 is
// busy in its own code until then) gets the same error from a second
// Finalize, which used to return nil and hide it; PE 1, which finalizes
// normally, gets nil twice. The timeout names PE 1 as the PE that had not
// called Finalize.
func TestFinalizeAgainAfterTimeout(t *testing.T) {
	if os.Getenv("SHMEM_SIM_DELIVERY") != "" || os.Getenv("SHMEM_SIM_SEED") != "" {
		t.Skip("PEs that talk through a Go channel need the unscheduled simulator")
	}
	done := make(chan struct{})
	var first, again, first1, again1 error
	err := sim.Run(2, func(p *shmem.PE) error {
		if p.MyPE() == 1 {
			<-done
			first1 = p.Finalize()
			again1 = p.Finalize()
			return nil
		}
		first = p.Finalize()
		again = p.Finalize()
		close(done)
		return nil
	}, sim.WithOpTimeout(50*time.Millisecond))
	if err != nil {
		t.Errorf("Run: %v (every function returned nil)", err)
	}
	if !errors.Is(first, shmem.ErrTimeout) || !strings.Contains(first.Error(), "PE 1 has not called Finalize") {
		t.Fatalf("PE 0's Finalize: %v, want ErrTimeout naming PE 1", first)
	}
	if again != first {
		t.Errorf("PE 0's second Finalize: %v, want the first's error again", again)
	}
	if again1 != first1 {
		t.Errorf("PE 1's second Finalize: %v, want the first's %v", again1, first1)
	}
}

// TestGlobalExitEndsEveryWait: PE 1's GlobalExit ends PE 0's WaitUntil,
// PE 2's SetLock (of the lock PE 1 holds) and PE 3's Reduce with the exit,
// under the Lazy delivery's seeds (failcheck's global-exit-in-waits). The
// Finalize after PE 1's GlobalExit used to publish its departure, which
// PE 2 could read before the exit's notice: its SetLock failed with
// ErrPEFailed, "PE 1 holds the lock ... and called Finalize" (seeds 8,
// 11, 12).
func TestGlobalExitEndsEveryWait(t *testing.T) {
	var sc failcheck.Scenario
	for _, s := range failcheck.Scenarios() {
		if s.Name == "global-exit-in-waits" {
			sc = s
		}
	}
	for seed := int64(1); seed <= 12; seed++ {
		got := make([]error, sc.NPEs)
		var mu sync.Mutex
		err := sim.Run(sc.NPEs, func(p *shmem.PE) error {
			body := sc.Body(p)
			fin := p.Finalize()
			mu.Lock()
			got[p.MyPE()] = body
			mu.Unlock()
			return fin
		}, sim.WithDelivery(sim.Lazy), sim.WithSeed(seed))
		if st, ok := shmem.ExitStatus(err); !ok || st != 6 {
			t.Errorf("seed %d: Run returned %v, want exit status 6", seed, err)
		}
		for r, e := range got {
			if st, ok := shmem.ExitStatus(e); !ok || st != 6 {
				t.Errorf("seed %d: PE %d got %v, want the exit (status 6)", seed, r, e)
			}
		}
	}
}

// TestOnFailure: every survivor's failure handler hears once of the PE
// that failed, with its reason, whether set before the failure or after
// it was recorded, and nobody hears of PEs that finalized.
func TestOnFailure(t *testing.T) {
	type call struct {
		pe     int
		reason string
	}
	calls := make([]chan call, 4)
	for i := range calls {
		calls[i] = make(chan call, 4)
	}
	heard := func(me int) func(int, string) {
		return func(pe int, reason string) { calls[me] <- call{pe, reason} }
	}
	runErr := sim.Run(4, func(p *shmem.PE) error {
		me := p.MyPE()
		if me == 3 {
			return errors.New("routing table corrupt")
		}
		if me != 2 {
			p.OnFailure(heard(me))
		}
		err := p.BarrierAll()
		if !errors.Is(err, shmem.ErrPEFailed) {
			return fmt.Errorf("PE %d: BarrierAll returned %v, want ErrPEFailed", me, err)
		}
		if me == 2 {
			p.OnFailure(heard(me)) // after the failure was recorded
		}
		select {
		case c := <-calls[me]:
			if c.pe != 3 || !strings.Contains(c.reason, "routing table corrupt") {
				return fmt.Errorf("PE %d heard of PE %d failing for %q, want PE 3 and its reason", me, c.pe, c.reason)
			}
		case <-time.After(time.Minute):
			return fmt.Errorf("PE %d: no call of its failure handler", me)
		}
		p.OnFailure(heard(me)) // again: PE 3 is not reported twice
		return nil
	})
	if runErr == nil || !strings.Contains(runErr.Error(), "routing table corrupt") {
		t.Fatalf("Run returned %v, want PE 3's error", runErr)
	}
	for me := range 3 {
		if len(calls[me]) != 0 {
			t.Errorf("PE %d heard of a failure twice: %v", me, <-calls[me])
		}
	}

	left := make(chan call, 8)
	if err := sim.Run(3, func(p *shmem.PE) error {
		p.OnFailure(func(pe int, reason string) { left <- call{pe, reason} })
		return p.Finalize()
	}); err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("a handler heard of a PE that finalized: %v", <-left)
	}
}
