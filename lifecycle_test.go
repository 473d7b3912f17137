package shmem_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/sim"
)

func TestInfo(t *testing.T) {
	if major, minor := shmem.InfoGetVersion(); major != 1 || minor != 5 {
		t.Errorf("InfoGetVersion = %d.%d, want 1.5", major, minor)
	}
	if name := shmem.InfoGetName(); name != "goshmem" {
		t.Errorf("InfoGetName = %q", name)
	}
}

// TestInitAlone: Init with no options is a world of one PE, fully usable,
// and Finalize releases its goroutines and mappings.
func TestInitAlone(t *testing.T) {
	defer goleak.VerifyNone(t)
	p, err := shmem.Init(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if p.MyPE() != 0 || p.NPEs() != 1 || !p.Accessible(0) || p.Accessible(1) {
		t.Fatalf("MyPE %d NPEs %d", p.MyPE(), p.NPEs())
	}
	s, err := shmem.Calloc[int64](p, 16)
	if err != nil {
		t.Fatal(err)
	}
	if err := shmem.Put(p, s, []int64{4, 5, 6}, 0); err != nil {
		t.Fatal(err)
	}
	if v, err := shmem.AtomicFetchAdd(p, s.Slice(1, 2), 10, 0); err != nil || v != 5 {
		t.Fatalf("AtomicFetchAdd = %d, %v", v, err)
	}
	if err := p.BarrierAll(); err != nil {
		t.Fatal(err)
	}
	if got := s.Local(p)[:3]; got[0] != 4 || got[1] != 15 || got[2] != 6 {
		t.Fatalf("Local = %v", got)
	}
	sig, err := shmem.Calloc[uint64](p, 1)
	if err != nil {
		t.Fatal(err)
	}
	heap := heapBytes(p, s)
	if !resident(heap) {
		t.Fatalf("heap at %p holds no pages before Finalize: the check after it would prove nothing", heap)
	}
	if err := p.Finalize(); err != nil {
		t.Fatal(err)
	}
	if err := p.Finalize(); err != nil {
		t.Fatalf("second Finalize: %v", err)
	}
	// Every call after Finalize fails cleanly, including those that only
	// read the caller's own (now unmapped) heap.
	if err := afterFinalize(p, s, sig); err != nil {
		t.Fatal(err)
	}
	if resident(heap) {
		t.Errorf("heap at %p still holds pages after Finalize", heap)
	}
}

func TestInitCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// Init documents both: every error of the package matches a sentinel.
	if _, err := shmem.Init(ctx); !errors.Is(err, context.Canceled) || !errors.Is(err, shmem.ErrBootstrap) {
		t.Fatalf("Init with a canceled context: %v, want context.Canceled and ErrBootstrap", err)
	}
}

func afterFinalize(p *shmem.PE, s shmem.Sym[int64], sig shmem.Sym[uint64]) error {
	ops := everyOp(p, s, sig, 0, []int64{1})
	ops["BarrierAll"] = p.BarrierAll()
	ops["SyncAll"] = p.SyncAll()
	ops["Quiet"] = p.Quiet()
	ops["CreateCtx"] = second(p.CreateCtx())
	ops["Malloc"] = second(shmem.Malloc[int64](p, 1))
	ops["Calloc"] = second(shmem.Calloc[int64](p, 1))
	ops["Free"] = shmem.Free(p, s)
	ops["Realloc"] = second(shmem.Realloc(p, s, 3))
	ops["WaitUntil"] = shmem.WaitUntil(p, s, shmem.CmpEQ, 99)
	ops["WaitUntilAll"] = shmem.WaitUntilAll(p, s, nil, shmem.CmpEQ, 99)
	ops["WaitUntilAny"] = second(shmem.WaitUntilAny(p, s, nil, shmem.CmpEQ, 99))
	ops["WaitUntilSome"] = second(shmem.WaitUntilSome(p, s, nil, shmem.CmpEQ, 99))
	ops["SignalWaitUntil"] = second(shmem.SignalWaitUntil(p, sig, shmem.CmpEQ, 99))
	ops["SetLock"] = shmem.SetLock(p, s)
	ops["TestLock"] = second(shmem.TestLock(p, s))
	ops["ClearLock"] = shmem.ClearLock(p, s)
	if err := checkAll(ops, shmem.ErrFinalized); err != nil {
		return err
	}
	p.Fence() // must not fail or crash
	if s.Local(p) != nil {
		return fmt.Errorf("Local after Finalize is not nil")
	}
	if shmem.SignalFetch(p, sig) != 0 || shmem.Test(p, s, shmem.CmpEQ, 0) || shmem.TestAll(p, s, nil, shmem.CmpEQ, 0) {
		return fmt.Errorf("a test or fetch after Finalize reported a value")
	}
	if _, ok := shmem.Ptr(p, s, 0); ok {
		return fmt.Errorf("Ptr after Finalize succeeded")
	}
	if p.Accessible(0) {
		return fmt.Errorf("Accessible after Finalize")
	}
	return nil
}

func TestCallsAfterFinalize(t *testing.T) {
	run(t, 3, func(p *shmem.PE) error {
		s, _ := shmem.Calloc[int64](p, 4)
		sig, err := shmem.Calloc[uint64](p, 1)
		if err != nil {
			return err
		}
		if err := p.Finalize(); err != nil {
			return err
		}
		return afterFinalize(p, s, sig)
	})
}

// TestWorldReleased: a world's goroutines and mappings are gone once
// sim.Run returns.
func TestWorldReleased(t *testing.T) {
	defer goleak.VerifyNone(t)
	heaps := make([][]byte, 8)
	run(t, 8, func(p *shmem.PE) error {
		s, err := shmem.Calloc[int64](p, 1<<16)
		if err != nil {
			return err
		}
		for i := range s.Local(p) {
			s.Local(p)[i] = 1 // touch every page
		}
		if !resident(heapBytes(p, s)) {
			return fmt.Errorf("heap holds no pages: the check after Run would prove nothing")
		}
		heaps[p.MyPE()] = heapBytes(p, s)
		return p.BarrierAll()
	})
	for pe, h := range heaps {
		if resident(h) {
			t.Errorf("PE %d's heap at %p still holds pages after Run", pe, h)
		}
	}
}

func TestContexts(t *testing.T) {
	run(t, 2, func(p *shmem.PE) error {
		other := 1 - p.MyPE()
		s, err := shmem.Calloc[int64](p, 4)
		if err != nil {
			return err
		}
		ctx, err := p.CreateCtx()
		if err != nil {
			return err
		}
		if ctx.MyPE() != p.MyPE() || ctx.NPEs() != 2 {
			return fmt.Errorf("context MyPE %d NPEs %d", ctx.MyPE(), ctx.NPEs())
		}
		// A context shares the heap: Syms work through it.
		if err := shmem.PutNBI(ctx, s, []int64{int64(p.MyPE() + 1)}, other); err != nil {
			return err
		}
		if err := shmem.AtomicAdd(ctx, s.Slice(1, 2), 5, other); err != nil {
			return err
		}
		ctx.Fence()
		if err := ctx.Quiet(); err != nil {
			return err
		}
		if err := wantErr(ctx.Finalize(), shmem.ErrInvalidArgument, "Finalize", "context"); err != nil {
			return err
		}
		if err := wantErr(p.Destroy(), shmem.ErrInvalidArgument, "Destroy", "Finalize"); err != nil {
			return err
		}
		if err := ctx.Destroy(); err != nil {
			return err
		}
		if err := ctx.Destroy(); err != nil {
			return fmt.Errorf("second Destroy: %w", err)
		}
		if err := wantErr(shmem.Put(ctx, s, []int64{1}, other), shmem.ErrInvalidArgument, "Put", "destroyed"); err != nil {
			return err
		}
		// The PE itself is untouched by its context's end.
		if err := p.BarrierAll(); err != nil {
			return err
		}
		return joinFirst(want(p, "via ctx", s.Local(p)[0], int64(other+1)), want(p, "atomic via ctx", s.Local(p)[1], int64(5)))
	})
}

func TestGlobalExit(t *testing.T) {
	bad := make([]error, 4)
	err := sim.Run(4, func(p *shmem.PE) error {
		flag, err := shmem.Calloc[int64](p, 1)
		if status, ok := shmem.ExitStatus(err); ok && status == 7 {
			return nil // PE 2 left Calloc's sync and exited before this PE did
		}
		if err != nil {
			return err
		}
		if p.MyPE() == 2 {
			p.GlobalExit(7)
		}
		// Nobody sets the flag: only the exit can end this wait.
		err = shmem.WaitUntil(p, flag, shmem.CmpEQ, 1)
		if status, ok := shmem.ExitStatus(err); !ok || status != 7 || !errors.Is(err, shmem.ErrFinalized) {
			return fmt.Errorf("PE %d: wait ended with %v, want exit status 7", p.MyPE(), err)
		}
		if err := shmem.Put(p, flag, []int64{1}, 0); !errors.Is(err, shmem.ErrFinalized) {
			return fmt.Errorf("PE %d: put after GlobalExit: %v", p.MyPE(), err)
		}
		// Finalize's error names the call and both PEs, as any other's.
		err = p.Finalize()
		if status, ok := shmem.ExitStatus(err); !ok || status != 7 || !errors.Is(err, shmem.ErrFinalized) ||
			!strings.HasPrefix(err.Error(), fmt.Sprintf("shmem: Finalize (PE %d -> PE 2): world ended by GlobalExit(7) on PE 2", p.MyPE())) {
			// Run's error is the exit's whatever fn returns: kept apart.
			bad[p.MyPE()] = fmt.Errorf("PE %d: Finalize after GlobalExit: %v", p.MyPE(), err)
		}
		return nil
	})
	if err := errors.Join(bad...); err != nil {
		t.Fatal(err)
	}
	// The world ended by GlobalExit: Run says so, every time.
	if status, ok := shmem.ExitStatus(err); !ok || status != 7 {
		t.Fatalf("Run returned %v, want an error carrying exit status 7", err)
	}
}

func TestBackToBackBarriers(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 8} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			run(t, n, func(p *shmem.PE) error {
				ctr, err := shmem.Calloc[int64](p, 1)
				if err != nil {
					return err
				}
				for i := 1; i <= 100; i++ {
					// Everyone adds to PE 0's counter, then a barrier: PE 0
					// sees exactly i*n after the i-th barrier, never more.
					if err := shmem.AtomicAdd(p, ctr, 1, 0); err != nil {
						return err
					}
					if i%2 == 0 {
						err = p.BarrierAll()
					} else if err = p.Quiet(); err == nil {
						// SyncAll does not complete the add (OpenSHMEM 1.5
						// shmem_sync_all): without this Quiet, Lazy mode sees
						// the count lag.
						err = p.SyncAll()
					}
					if err != nil {
						return err
					}
					if p.MyPE() == 0 {
						if got := ctr.Local(p)[0]; got != int64(i*n) {
							return fmt.Errorf("after barrier %d counter = %d, want %d", i, got, i*n)
						}
					}
					if err := p.SyncAll(); err != nil { // nobody adds before PE 0 looked
						return err
					}
				}
				return nil
			})
		})
	}
}

// TestWorldsIndependent runs several worlds at once; each sees only its own
// PEs and data.
func TestWorldsIndependent(t *testing.T) {
	var wg sync.WaitGroup
	errc := make(chan error, 4)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := w + 2
			errc <- runErr(n, func(p *shmem.PE) error {
				s, err := shmem.Calloc[int64](p, 1)
				if err != nil {
					return err
				}
				for i := 0; i < 50; i++ {
					if err := shmem.AtomicAdd(p, s, int64(w+1), 0); err != nil {
						return err
					}
				}
				if err := p.BarrierAll(); err != nil {
					return err
				}
				if p.NPEs() != n {
					return fmt.Errorf("world %d has %d PEs", w, p.NPEs())
				}
				v, err := shmem.G(p, s, 0)
				if err != nil {
					return err
				}
				return want(p, fmt.Sprintf("world %d sum", w), v, int64(50*n*(w+1)))
			})
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		if err != nil {
			t.Error(err)
		}
	}
}

// TestFailedPE: a PE whose function fails is reported to the others, whose
// waits end with ErrPEFailed instead of hanging.
func TestFailedPE(t *testing.T) {
	boom := errors.New("boom")
	err := sim.Run(3, func(p *shmem.PE) error {
		flag, err := shmem.Calloc[int64](p, 1)
		if err != nil {
			return err
		}
		if p.MyPE() == 1 {
			return boom
		}
		err = shmem.WaitUntil(p, flag, shmem.CmpEQ, 1)
		if !errors.Is(err, shmem.ErrPEFailed) {
			return fmt.Errorf("PE %d: wait ended with %v, want ErrPEFailed", p.MyPE(), err)
		}
		if p.Accessible(1) {
			return fmt.Errorf("failed PE is Accessible")
		}
		return nil
	})
	if !errors.Is(err, boom) || errors.Is(err, errors.New("")) {
		t.Fatalf("Run = %v", err)
	}
	if msg := err.Error(); !contains(msg, "PE 1: boom") || contains(msg, "want ErrPEFailed") {
		t.Fatalf("Run = %v", err)
	}
}
