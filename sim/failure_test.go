package sim_test

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/sim"
)

// blocking lists a program per blocking call: each runs it in a loop long
// enough for the failure to strike inside it.
var blocking = map[string]func(p *shmem.PE) error{
	"BarrierAll": func(p *shmem.PE) error {
		for i := 0; i < 50; i++ {
			if err := p.BarrierAll(); err != nil {
				return err
			}
		}
		return nil
	},
	"WaitUntil": func(p *shmem.PE) error {
		x, err := shmem.Calloc[int64](p, 1)
		if err != nil {
			return err
		}
		me, np := p.MyPE(), p.NPEs()
		for i := int64(1); i <= 50; i++ {
			// A token ring: each PE waits for its left neighbour.
			if me != 0 || i > 1 {
				if err := shmem.WaitUntil(p, x, shmem.CmpGE, i); err != nil {
					return err
				}
			}
			if err := shmem.P(p, x, i+int64(boolInt(me == np-1)), (me+1)%np); err != nil {
				return err
			}
		}
		return nil
	},
	"FCollect": func(p *shmem.PE) error {
		src, _ := shmem.Calloc[int64](p, 2)
		dst, err := shmem.Calloc[int64](p, 2*p.NPEs())
		if err != nil {
			return err
		}
		for i := 0; i < 30; i++ {
			if err := shmem.FCollect(p.TeamWorld(), dst, src); err != nil {
				return err
			}
		}
		return nil
	},
	"Reduce": func(p *shmem.PE) error {
		src, _ := shmem.Calloc[int64](p, 16)
		dst, err := shmem.Calloc[int64](p, 16)
		if err != nil {
			return err
		}
		for i := 0; i < 30; i++ {
			if err := shmem.Reduce(p.TeamWorld(), shmem.OpSum, dst, src); err != nil {
				return err
			}
		}
		return nil
	},
	"Broadcast": func(p *shmem.PE) error {
		src, _ := shmem.Calloc[int64](p, 16)
		dst, err := shmem.Calloc[int64](p, 16)
		if err != nil {
			return err
		}
		for i := 0; i < 30; i++ {
			if err := shmem.Broadcast(p.TeamWorld(), dst, src, i%p.NPEs()); err != nil {
				return err
			}
		}
		return nil
	},
	"SignalWaitUntil": func(p *shmem.PE) error {
		sig, _ := shmem.Calloc[uint64](p, 1)
		data, err := shmem.Calloc[int64](p, 4)
		if err != nil {
			return err
		}
		me, np := p.MyPE(), p.NPEs()
		for i := uint64(1); i <= 30; i++ {
			if err := shmem.PutSignal(p, data, []int64{1, 2, 3, 4}, sig, 1, shmem.SignalAdd, (me+1)%np); err != nil {
				return err
			}
			if _, err := shmem.SignalWaitUntil(p, sig, shmem.CmpGE, i); err != nil {
				return err
			}
		}
		return nil
	},
	"SetLock": func(p *shmem.PE) error {
		// Each PE adds to a counter on PE 0 under the lock, so a PE that
		// dies may die holding it, or while it waits for it.
		l, _ := shmem.Calloc[int64](p, 1)
		count, err := shmem.Calloc[int64](p, 1)
		if err != nil {
			return err
		}
		for i := 0; i < 20; i++ {
			if err := shmem.SetLock(p, l); err != nil {
				return err
			}
			v, err := shmem.G(p, count, 0)
			if err != nil {
				return err
			}
			if err := shmem.P(p, count, v+1, 0); err != nil {
				return err
			}
			if err := shmem.ClearLock(p, l); err != nil {
				return err
			}
		}
		return nil
	},
	"Malloc": func(p *shmem.PE) error {
		for i := 0; i < 20; i++ {
			s, err := shmem.Malloc[int64](p, 4)
			if err != nil {
				return err
			}
			if err := shmem.Put(p, s, []int64{1}, (p.MyPE()+1)%p.NPEs()); err != nil {
				return err
			}
			if err := shmem.Free(p, s); err != nil {
				return err
			}
		}
		return nil
	},
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestFailureEveryBlockingCall kills PE 2 of 4 at several points of each
// blocking call's loop: the run ends (no hang), the killed PE's error says
// why, and every survivor that did not finish first fails with
// ErrPEFailed naming PE 2.
func TestFailureEveryBlockingCall(t *testing.T) {
	for name, prog := range blocking {
		for _, after := range []int{0, 3, 17, 29} {
			t.Run(fmt.Sprintf("%s/after%d", name, after), func(t *testing.T) {
				err := sim.Run(4, prog, sim.WithFailure(2, after), sim.WithSeed(int64(after+1)),
					sim.WithDelivery(sim.Lazy))
				if err == nil {
					t.Fatal("a run with a killed PE succeeded")
				}
				if !errors.Is(err, shmem.ErrPEFailed) {
					t.Fatalf("error does not match ErrPEFailed: %v", err)
				}
				msg := err.Error()
				if !contains(msg, fmt.Sprintf("killed by sim.WithFailure after %d goshmem calls", after)) {
					t.Fatalf("error does not say PE 2 was killed: %v", err)
				}
			})
		}
	}
}

// TestKilledPEReportedToSurvivors: the survivors' errors name the dead PE.
func TestKilledPEReportedToSurvivors(t *testing.T) {
	var survivors [3]error
	_ = sim.Run(3, func(p *shmem.PE) error {
		for i := 0; i < 20; i++ {
			if err := p.BarrierAll(); err != nil {
				survivors[p.MyPE()] = err
				return err
			}
		}
		return nil
	}, sim.WithFailure(1, 10), sim.WithSeed(5))
	for _, r := range []int{0, 2} {
		err := survivors[r]
		if !errors.Is(err, shmem.ErrPEFailed) || !contains(err.Error(), "PE 1") {
			t.Errorf("PE %d: %v, want ErrPEFailed naming PE 1", r, err)
		}
	}
}

// TestLockHolderDies: PE 2 takes the lock, tells the others (put and
// Quiet) and dies holding it; each of the others, waiting for the lock,
// ends with ErrPEFailed from SetLock naming PE 2 (or PE 0, the lock's
// home, when PE 0 failed first, its reason naming PE 2), under any seed.
func TestLockHolderDies(t *testing.T) {
	for seed := int64(1); seed <= 3; seed++ {
		var got [4]error
		err := sim.Run(4, func(p *shmem.PE) error {
			l, _ := shmem.Calloc[int64](p, 1)
			flag, err := shmem.Calloc[int64](p, 1)
			if err != nil {
				return err
			}
			// PE 2 goes on once every other PE is out of the
			// allocation's SyncAll (and says so with an atomic add).
			if p.MyPE() == 2 {
				if err := shmem.WaitUntil(p, flag, shmem.CmpEQ, 3); err != nil {
					return err
				}
				if err := shmem.SetLock(p, l); err != nil {
					return err
				}
				for _, r := range []int{0, 1, 3} {
					if err := shmem.P(p, flag, 1, r); err != nil {
						return err
					}
				}
				if err := p.Quiet(); err != nil {
					return err
				}
				panic("dies holding the lock")
			}
			if err := shmem.AtomicAdd(p, flag, 1, 2); err != nil {
				return err
			}
			if err := shmem.WaitUntil(p, flag, shmem.CmpEQ, 1); err != nil {
				return err
			}
			got[p.MyPE()] = shmem.SetLock(p, l)
			return got[p.MyPE()]
		}, sim.WithSeed(seed), sim.WithDelivery(sim.Lazy))
		if err == nil {
			t.Fatalf("seed %d: a run whose lock holder died succeeded", seed)
		}
		for _, r := range []int{0, 1, 3} {
			if !errors.Is(got[r], shmem.ErrPEFailed) || !contains(got[r].Error(), "SetLock") || !contains(got[r].Error(), "PE 2") {
				t.Errorf("seed %d: PE %d got %v, want ErrPEFailed from SetLock naming PE 2", seed, r, got[r])
			}
		}
	}
}

// TestGlobalExitWinsOverReturnedError: a PE that calls GlobalExit and
// then returns an error of its own (a "fatal: exiting" path) leaves Run
// an error that carries the exit status, in either delivery and any
// seed; its own error is kept beside it, and the others see the exit,
// not a failure. It used to read as a plain PE failure.
func TestGlobalExitWinsOverReturnedError(t *testing.T) {
	for _, d := range []sim.Delivery{sim.Eager, sim.Lazy} {
		for seed := int64(0); seed < 6; seed++ {
			err := sim.Run(3, func(p *shmem.PE) error {
				f, err := shmem.Calloc[int64](p, 1)
				if err != nil {
					return err
				}
				switch p.MyPE() {
				case 1:
					p.GlobalExit(7)
					return errors.New("fatal condition, exited")
				case 0:
					return shmem.WaitUntil(p, f, shmem.CmpEQ, 1)
				}
				return p.BarrierAll()
			}, sim.WithDelivery(d), sim.WithSeed(seed))
			if st, ok := shmem.ExitStatus(err); !ok || st != 7 {
				t.Fatalf("delivery %d seed %d: ExitStatus = %d, %v of %v; want 7", d, seed, st, ok, err)
			}
			if !errors.Is(err, shmem.ErrFinalized) || errors.Is(err, shmem.ErrPEFailed) {
				t.Fatalf("delivery %d seed %d: %v: want ErrFinalized and no ErrPEFailed", d, seed, err)
			}
			if !contains(err.Error(), "PE 1: world ended by GlobalExit(7) on PE 1; after it: fatal condition, exited") {
				t.Fatalf("delivery %d seed %d: %v does not keep PE 1's own error", d, seed, err)
			}
		}
	}
}

// TestFailureInsideRunsFinalize sweeps WithFailure's count across a
// function that returns without calling Finalize, so that some counts fall
// inside the Finalize Run calls for it. Run returns every time (it used to
// crash the process with the simulator's panic out of its deferred
// Finalize), and the death is reported as any other: PE 0's line says it
// was killed, the survivor's error matches ErrPEFailed.
func TestFailureInsideRunsFinalize(t *testing.T) {
	inFinalize := 0
	for k := 0; k < 20; k++ {
		for seed := int64(1); seed <= 3; seed++ {
			var returned atomic.Bool
			err := sim.Run(2, func(p *shmem.PE) error {
				err := p.BarrierAll()
				if err == nil && p.MyPE() == 0 {
					returned.Store(true)
				}
				return err
			}, sim.WithFailure(0, k), sim.WithSeed(seed))
			if err == nil {
				continue
			}
			want := fmt.Sprintf("PE 0: killed by sim.WithFailure after %d goshmem calls: PE failed", k)
			if !errors.Is(err, shmem.ErrPEFailed) || !strings.HasPrefix(err.Error(), want+"\n") {
				t.Fatalf("k=%d seed %d: got %v, want ErrPEFailed starting %q", k, seed, err, want)
			}
			if !contains(err.Error(), "\nPE 1: ") {
				t.Fatalf("k=%d seed %d: the survivor reports nothing: %v", k, seed, err)
			}
			if returned.Load() {
				inFinalize++
			}
		}
	}
	if inFinalize == 0 {
		t.Fatal("no count fell inside Run's Finalize: the sweep tests nothing")
	}
}

// TestKilledPELabelled: the PE WithFailure kills is labelled in Run's
// error as every other PE is ("PE 1: ..."), not as an operation "sim".
func TestKilledPELabelled(t *testing.T) {
	err := sim.Run(2, func(p *shmem.PE) error {
		for i := 0; i < 20; i++ {
			if err := p.BarrierAll(); err != nil {
				return err
			}
		}
		return nil
	}, sim.WithFailure(1, 3), sim.WithSeed(1))
	want := "\nPE 1: killed by sim.WithFailure after 3 goshmem calls: PE failed\n"
	if !errors.Is(err, shmem.ErrPEFailed) || !contains("\n"+err.Error()+"\n", want) {
		t.Fatalf("got %q, want a line %q", err, want[1:len(want)-1])
	}
}

// TestRunErrorStartsWithTheCause: the PE whose own call failed comes first
// in Run's error, before the PEs that only report its failure, whatever
// their ranks.
func TestRunErrorStartsWithTheCause(t *testing.T) {
	mistake := errors.New("the value read was wrong")
	err := sim.Run(3, func(p *shmem.PE) error {
		if p.MyPE() == 2 {
			return mistake // returns without Finalize: the others see it fail
		}
		return p.BarrierAll()
	})
	if !errors.Is(err, mistake) {
		t.Fatalf("Run: %v", err)
	}
	first, _, _ := strings.Cut(err.Error(), "\n")
	if !strings.Contains(first, mistake.Error()) {
		t.Fatalf("first line %q is not PE 2's mistake; whole error:\n%v", first, err)
	}
}
