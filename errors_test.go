package shmem_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/goshmem/shmem"
)

// everyOp calls every data-path operation with s on pe, returning each
// call's name and error.
func everyOp(p *shmem.PE, s shmem.Sym[int64], sig shmem.Sym[uint64], pe int, buf []int64) map[string]error {
	return map[string]error{
		"Put":               shmem.Put(p, s, buf, pe),
		"PutNBI":            shmem.PutNBI(p, s, buf, pe),
		"Get":               shmem.Get(p, buf, s, pe),
		"GetNBI":            shmem.GetNBI(p, buf, s, pe),
		"P":                 shmem.P(p, s, 1, pe),
		"G":                 second(shmem.G(p, s, pe)),
		"IPut":              shmem.IPut(p, s, buf, 1, 1, 1, pe),
		"IGet":              shmem.IGet(p, buf, s, 1, 1, 1, pe),
		"PutSignal":         shmem.PutSignal(p, s, buf, sig, 1, shmem.SignalSet, pe),
		"PutSignalNBI":      shmem.PutSignalNBI(p, s, buf, sig, 1, shmem.SignalAdd, pe),
		"AtomicFetch":       second(shmem.AtomicFetch(p, s, pe)),
		"AtomicSet":         shmem.AtomicSet(p, s, 1, pe),
		"AtomicSwap":        second(shmem.AtomicSwap(p, s, 1, pe)),
		"AtomicCompareSwap": second(shmem.AtomicCompareSwap(p, s, 0, 1, pe)),
		"AtomicFetchInc":    second(shmem.AtomicFetchInc(p, s, pe)),
		"AtomicInc":         shmem.AtomicInc(p, s, pe),
		"AtomicFetchAdd":    second(shmem.AtomicFetchAdd(p, s, 1, pe)),
		"AtomicAdd":         shmem.AtomicAdd(p, s, 1, pe),
		"AtomicFetchAnd":    second(shmem.AtomicFetchAnd(p, s, 1, pe)),
		"AtomicAnd":         shmem.AtomicAnd(p, s, 1, pe),
		"AtomicFetchOr":     second(shmem.AtomicFetchOr(p, s, 1, pe)),
		"AtomicOr":          shmem.AtomicOr(p, s, 1, pe),
		"AtomicFetchXor":    second(shmem.AtomicFetchXor(p, s, 1, pe)),
		"AtomicXor":         shmem.AtomicXor(p, s, 1, pe),
	}
}

// checkAll checks that every op failed with sentinel and a message naming
// the op and the fragments.
func checkAll(errsByOp map[string]error, sentinel error, fragments ...string) error {
	for op, err := range errsByOp {
		if e := wantErr(err, sentinel, op, fragments...); e != nil {
			return e
		}
	}
	return nil
}

func TestBadPE(t *testing.T) {
	run(t, 2, func(p *shmem.PE) error {
		s, _ := shmem.Calloc[int64](p, 4)
		sig, err := shmem.Calloc[uint64](p, 1)
		if err != nil {
			return err
		}
		buf := []int64{1}
		for _, pe := range []int{-1, 2, 1 << 40} {
			// The message names the caller and the bad PE.
			frag := fmt.Sprintf("PE %d is not in a world of 2", pe)
			if err := checkAll(everyOp(p, s, sig, pe, buf), shmem.ErrInvalidArgument, fmt.Sprintf("(PE %d", p.MyPE()), frag); err != nil {
				return err
			}
			if _, ok := shmem.Ptr(p, s, pe); ok {
				return fmt.Errorf("Ptr to PE %d succeeded", pe)
			}
			if p.Accessible(pe) {
				return fmt.Errorf("Accessible(%d) is true", pe)
			}
		}
		if !p.Accessible(0) || !p.Accessible(1) {
			return fmt.Errorf("a live PE is not Accessible")
		}
		// Nothing was written anywhere.
		if err := p.BarrierAll(); err != nil {
			return err
		}
		return joinFirst(want(p, "s[0]", s.Local(p)[0], int64(0)), want(p, "sig", shmem.SignalFetch(p, sig), uint64(0)))
	})
}

func TestRangePastEnd(t *testing.T) {
	run(t, 2, func(p *shmem.PE) error {
		other := 1 - p.MyPE()
		guard, _ := shmem.Calloc[int64](p, 8) // allocated first, so before s
		s, _ := shmem.Calloc[int64](p, 4)
		after, err := shmem.Calloc[int64](p, 8)
		if err != nil {
			return err
		}
		five := make([]int64, 5)
		for i := range five {
			five[i] = -1
		}
		for op, err := range map[string]error{
			"Put":    shmem.Put(p, s, five, other),
			"PutNBI": shmem.PutNBI(p, s.Slice(1, 4), five[:4], other),
			"Get":    shmem.Get(p, five, s, other),
			"GetNBI": shmem.GetNBI(p, five, s, other),
			"IPut":   shmem.IPut(p, s, five, 2, 1, 3, other), // touches element 4
			"IGet":   shmem.IGet(p, five, s, 1, 2, 3, other), // reads element 4
			"IPut ":  shmem.IPut(p, s, five, 1, 3, 3, other), // reads src[6] of 5
			"IGet ":  shmem.IGet(p, five, s, 3, 1, 3, other), // writes dst[6] of 5
			"PutSig": shmem.PutSignal(p, s, five, shmem.Sym[uint64]{}, 1, shmem.SignalSet, other),
		} {
			name := strings.TrimSpace(op)
			if op == "PutSig" {
				name = "PutSignal"
			}
			if e := wantErr(err, shmem.ErrInvalidArgument, name); e != nil {
				return e
			}
		}
		if err := wantErr(shmem.Put(p, s, five, other), shmem.ErrInvalidArgument, "Put", "elements [0, 0+5) outside a symmetric object of 4"); err != nil {
			return err
		}
		// An empty Sym (a Slice out of range gives the zero Sym) is invalid
		// where an element is needed.
		if err := checkAll(everyOp(p, s.Slice(4, 4), shmem.Sym[uint64]{}, other, []int64{1}), shmem.ErrInvalidArgument); err != nil {
			return err
		}
		if err := checkAll(everyOp(p, s.Slice(3, 9), shmem.Sym[uint64]{}, other, []int64{1}), shmem.ErrInvalidArgument); err != nil {
			return err
		}
		if err := p.BarrierAll(); err != nil {
			return err
		}
		for _, x := range [][]int64{guard.Local(p), s.Local(p), after.Local(p)} {
			for i, v := range x {
				if v != 0 {
					return fmt.Errorf("PE %d: a rejected call wrote %d at %d", p.MyPE(), v, i)
				}
			}
		}
		return nil
	})
}

func TestBadCounts(t *testing.T) {
	run(t, 2, func(p *shmem.PE) error {
		s, err := shmem.Calloc[int64](p, 8)
		if err != nil {
			return err
		}
		buf := make([]int64, 8)
		for name, err := range map[string]error{
			"IPut n":      shmem.IPut(p, s, buf, 1, 1, -1, 1),
			"IGet n":      shmem.IGet(p, buf, s, 1, 1, -1, 1),
			"IPut stride": shmem.IPut(p, s, buf, 0, 1, 2, 1),
			"IGet stride": shmem.IGet(p, buf, s, 1, -3, 2, 1),
		} {
			if e := wantErr(err, shmem.ErrInvalidArgument, name[:4], "count", "strides"); e != nil {
				return e
			}
		}
		return joinFirst(
			wantErr(shmem.PutSignal(p, s, buf, shmem.Sym[uint64]{}, 1, shmem.SignalOp(9), 1), shmem.ErrInvalidArgument, "PutSignal", "signal op 9"),
			wantErr(shmem.WaitUntil(p, s, shmem.Cmp(0), 1), shmem.ErrInvalidArgument, "WaitUntil", "comparison 0"),
			wantErr(second(shmem.SignalWaitUntil(p, shmem.Sym[uint64]{}, shmem.CmpEQ, 1)), shmem.ErrInvalidArgument, "SignalWaitUntil", "zero"),
			wantErr(second(shmem.SignalWaitUntil(p, shmem.Sym[uint64]{}, shmem.Cmp(7), 1)), shmem.ErrInvalidArgument, "SignalWaitUntil", "comparison 7"),
		)
	})
}

func TestFreedSym(t *testing.T) {
	run(t, 2, func(p *shmem.PE) error {
		s, _ := shmem.Calloc[int64](p, 4)
		sig, err := shmem.Calloc[uint64](p, 1)
		if err != nil {
			return err
		}
		if err := shmem.Free(p, s); err != nil {
			return err
		}
		// The slot is reused by the next allocation: the stale Sym must
		// still fail, and not write into the new object.
		s2, err := shmem.Calloc[int64](p, 4)
		if err != nil {
			return err
		}
		if err := checkAll(everyOp(p, s, sig, 1-p.MyPE(), []int64{9}), shmem.ErrInvalidArgument, "freed"); err != nil {
			return err
		}
		if s.Local(p) != nil {
			return fmt.Errorf("Local of a freed Sym is not nil")
		}
		if err := p.BarrierAll(); err != nil {
			return err
		}
		return want(p, "new object", s2.Local(p)[0], int64(0))
	})
}

// TestOtherWorld passes a Sym from one world into another running at the
// same time: every call rejects it.
func TestOtherWorld(t *testing.T) {
	foreign := make(chan shmem.Sym[int64], 1)
	done := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		errc <- runErr(1, func(p *shmem.PE) error {
			s, err := shmem.Calloc[int64](p, 4)
			if err != nil {
				return err
			}
			foreign <- s
			<-done
			return want(p, "foreign world's object", s.Local(p)[0], int64(0))
		})
	}()
	run(t, 2, func(p *shmem.PE) error {
		mine, err := shmem.Calloc[int64](p, 4)
		if err != nil {
			return err
		}
		var s shmem.Sym[int64]
		if p.MyPE() == 0 {
			s = <-foreign
			defer close(done)
		} else {
			s = mine // a valid Sym of this world must keep working
		}
		sig, err := shmem.Calloc[uint64](p, 1)
		if err != nil {
			return err
		}
		if p.MyPE() == 0 {
			if s == mine {
				return fmt.Errorf("Syms of two worlds compare equal")
			}
			if err := checkAll(everyOp(p, s, sig, 1, []int64{5}), shmem.ErrInvalidArgument, "another world"); err != nil {
				return err
			}
			if s.Local(p) != nil {
				return fmt.Errorf("Local of a foreign Sym is not nil")
			}
		}
		return p.BarrierAll()
	})
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

// TestOtherWorldTeam passes a team of one world to TranslatePE on a team
// of another, running at the same time: a PE number of one world means
// nothing in the other, so the answer is -1 either way (not the number the
// rank happens to have there).
func TestOtherWorldTeam(t *testing.T) {
	// Two one-PE worlds, both live: their ranks are alike (0), their PEs
	// are not. (Simulated worlds would need a PE of one to wait, outside
	// goshmem, for the other, which a seeded run cannot schedule.)
	var ps [2]*shmem.PE
	for i := range ps {
		p, err := shmem.Init(context.Background(), shmem.WithHeapSize(1<<20))
		if err != nil {
			t.Fatal(err)
		}
		defer p.Finalize()
		ps[i] = p
	}
	f, w := ps[0].TeamWorld(), ps[1].TeamWorld()
	if got := f.TranslatePE(0, w); got != -1 {
		t.Errorf("TranslatePE(0) from another world's team = %d, want -1", got)
	}
	if got := w.TranslatePE(0, f); got != -1 {
		t.Errorf("TranslatePE(0) into another world's team = %d, want -1", got)
	}
	if got := w.TranslatePE(0, ps[1].TeamShared()); got != 0 {
		t.Errorf("TranslatePE(0) within the world = %d, want 0", got)
	}
}

// TestNoPanicOnRandomInput throws random PEs, ranges, counts, strides and
// Syms (live, sliced, zero, freed) at the API. sim.Run turns a panic into
// an error, so passing means none panicked; every call either succeeds or
// returns an error matching a sentinel.
func TestNoPanicOnRandomInput(t *testing.T) {
	run(t, 2, func(p *shmem.PE) error {
		a, _ := shmem.Calloc[int64](p, 16)
		freed, _ := shmem.Calloc[int64](p, 4)
		sig, err := shmem.Calloc[uint64](p, 2)
		if err != nil {
			return err
		}
		if err := shmem.Free(p, freed); err != nil {
			return err
		}
		rng := rand.New(rand.NewPCG(uint64(p.MyPE()), 7))
		ints := []int{-1 << 40, -2, -1, 0, 1, 2, 3, 15, 16, 17, 1 << 40}
		pick := func() int { return ints[rng.IntN(len(ints))] }
		syms := []shmem.Sym[int64]{a, a.Slice(3, 9), a.Slice(16, 16), a.Slice(5, 4), freed, {}}
		for i := 0; i < 3000; i++ {
			s := syms[rng.IntN(len(syms))].Slice(0, max(0, min(pick(), 16)))
			if rng.IntN(3) == 0 {
				s = syms[rng.IntN(len(syms))]
			}
			buf := make([]int64, rng.IntN(20))
			pe := pick()
			if rng.IntN(2) == 0 {
				pe = rng.IntN(2) // mostly valid PEs, so the range checks are reached
			}
			var err error
			switch rng.IntN(10) {
			case 0:
				err = shmem.Put(p, s, buf, pe)
			case 1:
				err = shmem.Get(p, buf, s, pe)
			case 2:
				err = shmem.IPut(p, s, buf, pick(), pick(), pick(), pe)
			case 3:
				err = shmem.IGet(p, buf, s, pick(), pick(), pick(), pe)
			case 4:
				_, err = shmem.AtomicCompareSwap(p, s, 0, int64(i), pe)
			case 5:
				err = shmem.PutSignal(p, s, buf, sig.Slice(0, pick()&1), 1, shmem.SignalOp(pick()), pe)
			case 6:
				_, err = shmem.G(p, s, pe)
			case 7:
				_ = shmem.TestSome(p, s, make([]bool, rng.IntN(20)), shmem.Cmp(pick()), 0)
			case 8:
				_, _ = shmem.Ptr(p, s, pe)
			case 9:
				_ = s.Local(p)
			}
			if err != nil && !errors.Is(err, shmem.ErrInvalidArgument) {
				return fmt.Errorf("unexpected error kind: %v", err)
			}
		}
		return p.BarrierAll()
	})
}

// TestBadSliceKeepsItsOrigin: an out-of-range Slice is reported by the
// call that uses it, with the bounds and the length it was cut from.
func TestBadSliceKeepsItsOrigin(t *testing.T) {
	run(t, 1, func(p *shmem.PE) error {
		s, err := shmem.Malloc[int64](p, 4)
		if err != nil {
			return err
		}
		bad := s.Slice(2, 9).Slice(0, 1)
		return wantErr(shmem.P(p, bad, 1, 0), shmem.ErrInvalidArgument, "P", "Slice(2, 9)", "of 4 elements")
	})
}
