package shmem_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/sim"
)

// bothDeliveries runs fn on n simulated PEs with Eager delivery and with
// seeded Lazy delivery, as a C program ported to goshmem would run.
func bothDeliveries(t *testing.T, n int, fn func(p *shmem.PE) error) {
	t.Helper()
	t.Run("eager", func(t *testing.T) { run(t, n, fn, sim.WithDelivery(sim.Eager)) })
	for _, seed := range []int64{1, 2, 3} {
		t.Run(fmt.Sprintf("lazy%d", seed), func(t *testing.T) {
			run(t, n, fn, sim.WithDelivery(sim.Lazy), sim.WithSeed(seed))
		})
	}
}

// The empty wait and test sets of the spec (all of status nonzero, or
// nelems 0): _any returns SIZE_MAX (-1 here), _some returns 0 indices,
// _all returns at once (test_all: 1).
func TestSpecEmptyWaitSets(t *testing.T) { bothDeliveries(t, 2, specEmptyWaitSets) }

func specEmptyWaitSets(p *shmem.PE) error {
	iv, err := shmem.Calloc[int64](p, 4)
	if err != nil {
		return err
	}
	all := []bool{true, true, true, true}
	for _, s := range []struct {
		name   string
		ivars  shmem.Sym[int64]
		status []bool
	}{{"all excluded", iv, all}, {"nelems 0", iv.Slice(0, 0), nil}, {"nelems 0 with status", iv.Slice(2, 2), []bool{}}} {
		if i, err := shmem.WaitUntilAny(p, s.ivars, s.status, shmem.CmpEQ, 7); err != nil || i != -1 {
			return fmt.Errorf("%s: WaitUntilAny = %d, %v; want -1", s.name, i, err)
		}
		if idx, err := shmem.WaitUntilSome(p, s.ivars, s.status, shmem.CmpEQ, 7); err != nil || len(idx) != 0 {
			return fmt.Errorf("%s: WaitUntilSome = %v, %v; want none", s.name, idx, err)
		}
		if err := shmem.WaitUntilAll(p, s.ivars, s.status, shmem.CmpEQ, 7); err != nil {
			return fmt.Errorf("%s: WaitUntilAll: %v", s.name, err)
		}
		if !shmem.TestAll(p, s.ivars, s.status, shmem.CmpEQ, 7) {
			return fmt.Errorf("%s: TestAll false on an empty set", s.name)
		}
		if i, ok := shmem.TestAny(p, s.ivars, s.status, shmem.CmpEQ, 7); ok || i != -1 {
			return fmt.Errorf("%s: TestAny = %d, %v", s.name, i, ok)
		}
		if idx := shmem.TestSome(p, s.ivars, s.status, shmem.CmpEQ, 7); len(idx) != 0 {
			return fmt.Errorf("%s: TestSome = %v", s.name, idx)
		}
		vals := make([]int64, s.ivars.Len())
		if i, err := shmem.WaitUntilAnyVector(p, s.ivars, s.status, shmem.CmpEQ, vals); err != nil || i != -1 {
			return fmt.Errorf("%s: WaitUntilAnyVector = %d, %v", s.name, i, err)
		}
		if idx, err := shmem.WaitUntilSomeVector(p, s.ivars, s.status, shmem.CmpEQ, vals); err != nil || len(idx) != 0 {
			return fmt.Errorf("%s: WaitUntilSomeVector = %v, %v", s.name, idx, err)
		}
		if err := shmem.WaitUntilAllVector(p, s.ivars, s.status, shmem.CmpEQ, vals); err != nil {
			return fmt.Errorf("%s: WaitUntilAllVector: %v", s.name, err)
		}
		if !shmem.TestAllVector(p, s.ivars, s.status, shmem.CmpEQ, vals) {
			return fmt.Errorf("%s: TestAllVector false on an empty set", s.name)
		}
	}
	return p.BarrierAll()
}

// A PE waits on a set whose excluded element already holds: only the
// included elements, set remotely by the other PE with atomics, end it,
// and the _vector forms compare each element with its own value.
func TestSpecWaitExclusionsRemote(t *testing.T) { bothDeliveries(t, 2, specWaitExclusionsRemote) }

func specWaitExclusionsRemote(p *shmem.PE) error {
	iv, err := shmem.Calloc[uint32](p, 5)
	if err != nil {
		return err
	}
	status := []bool{true, false, false, true, false}
	if p.MyPE() == 0 {
		iv.Local(p)[0] = 9 // excluded: must not satisfy anything
		iv.Local(p)[3] = 9
	}
	if err := p.BarrierAll(); err != nil {
		return err
	}
	if p.MyPE() == 1 {
		for _, i := range []int{4, 2, 1} {
			if err := shmem.AtomicSet(p, iv.Slice(i, i+1), uint32(9+i), 0); err != nil {
				return err
			}
			p.Fence()
		}
		return p.BarrierAll()
	}
	i, err := shmem.WaitUntilAny(p, iv, status, shmem.CmpGE, 9)
	if err != nil || (i != 1 && i != 2 && i != 4) {
		return fmt.Errorf("WaitUntilAny = %d, %v", i, err)
	}
	if err := shmem.WaitUntilAll(p, iv, status, shmem.CmpGE, 9); err != nil {
		return err
	}
	got := iv.Local(p)
	if !slices.Equal(got, []uint32{9, 10, 11, 9, 13}) {
		return fmt.Errorf("ivars = %v after WaitUntilAll", got)
	}
	idx, err := shmem.WaitUntilSomeVector(p, iv, status, shmem.CmpEQ, []uint32{9, 10, 0, 9, 13})
	if err != nil || !slices.Equal(idx, []int{1, 4}) {
		return fmt.Errorf("WaitUntilSomeVector = %v, %v; want [1 4]", idx, err)
	}
	if i, ok := shmem.TestAnyVector(p, iv, status, shmem.CmpNE, []uint32{0, 10, 11, 0, 13}); ok || i != -1 {
		return fmt.Errorf("TestAnyVector = %d, %v; want none", i, ok)
	}
	if !shmem.TestAllVector(p, iv, status, shmem.CmpLT, []uint32{0, 11, 12, 0, 14}) {
		return errors.New("TestAllVector LT false")
	}
	if shmem.TestAllVector(p, iv, nil, shmem.CmpLT, []uint32{0, 11, 12, 0, 14}) {
		return errors.New("TestAllVector with nil status true though element 0 fails")
	}
	return p.BarrierAll()
}

// Put-with-signal: SignalAdd from every PE accumulates, SignalSet
// overwrites, the data of each put is there when the signal says so, and
// SignalWaitUntil returns the value that satisfied it.
func TestSpecPutSignalOps(t *testing.T) { bothDeliveries(t, 4, specPutSignalOps) }

func specPutSignalOps(p *shmem.PE) error {
	me, n := p.MyPE(), p.NPEs()
	data, err := shmem.Calloc[int32](p, n*3)
	if err != nil {
		return err
	}
	sig, err := shmem.Calloc[uint64](p, 2)
	if err != nil {
		return err
	}
	src := []int32{int32(me*10 + 1), int32(me*10 + 2), int32(me*10 + 3)}
	if err := shmem.PutSignal(p, data.Slice(me*3, me*3+3), src, sig, 1<<uint(me), shmem.SignalAdd, 0); err != nil {
		return err
	}
	if err := shmem.PutSignalNBI(p, data.Slice(me*3, me*3+1), src[:1], sig.Slice(1, 2), uint64(100+me), shmem.SignalSet, (me+1)%n); err != nil {
		return err
	}
	if err := p.Quiet(); err != nil {
		return err
	}
	if me == 0 {
		v, err := shmem.SignalWaitUntil(p, sig, shmem.CmpEQ, 1<<n-1)
		if err != nil || v != 1<<n-1 {
			return fmt.Errorf("SignalWaitUntil = %d, %v", v, err)
		}
		d := data.Local(p)
		for pe := 1; pe < n; pe++ {
			for k := 0; k < 3; k++ {
				if d[pe*3+k] != int32(pe*10+k+1) {
					return fmt.Errorf("data from PE %d = %v after its signal", pe, d[pe*3:pe*3+3])
				}
			}
		}
	}
	prev := (me + n - 1) % n
	v, err := shmem.SignalWaitUntil(p, sig.Slice(1, 2), shmem.CmpNE, 0)
	if err != nil || v != uint64(100+prev) {
		return fmt.Errorf("PE %d: set signal = %d, %v; want %d", me, v, err, 100+prev)
	}
	if got := shmem.SignalFetch(p, sig.Slice(1, 2)); got != uint64(100+prev) {
		return fmt.Errorf("SignalFetch = %d", got)
	}
	if got := data.Local(p)[prev*3]; got != int32(prev*10+1) {
		return fmt.Errorf("PE %d: data from %d = %d", me, prev, got)
	}
	return p.BarrierAll()
}

// Zero-element put-with-signal still updates the signal.
func TestSpecPutSignalNoData(t *testing.T) { bothDeliveries(t, 2, specPutSignalNoData) }

func specPutSignalNoData(p *shmem.PE) error {
	data, err := shmem.Calloc[int64](p, 1)
	if err != nil {
		return err
	}
	sig, err := shmem.Calloc[uint64](p, 1)
	if err != nil {
		return err
	}
	if err := shmem.PutSignal(p, data, nil, sig, 5, shmem.SignalAdd, 1-p.MyPE()); err != nil {
		return err
	}
	if err := shmem.PutSignal(p, data.Slice(1, 1), []int64{}, sig, 6, shmem.SignalAdd, 1-p.MyPE()); err != nil {
		return err
	}
	v, err := shmem.SignalWaitUntil(p, sig, shmem.CmpGE, 11)
	if err != nil || v != 11 {
		return fmt.Errorf("signal = %d, %v", v, err)
	}
	return p.BarrierAll()
}

// Every fetching atomic returns the old value and leaves the new one, on
// an element past the first (Slice), for each type class: the bitwise
// ones on 4- and 8-byte unsigned and signed, Fetch/Set/Swap on floats,
// and the NBI forms' values are there after Quiet.
func atomicValuesOn[T shmem.Integer](t *testing.T) { bothDeliveries(t, 3, specAtomicValues[T]) }

func specAtomicValues[T shmem.Integer](p *shmem.PE) error {
	me, n := p.MyPE(), p.NPEs()
	x, err := shmem.Calloc[T](p, 3)
	if err != nil {
		return err
	}
	x.Local(p)[1] = T(0xF0)
	if err := p.BarrierAll(); err != nil {
		return err
	}
	target := (me + 1) % n
	el := x.Slice(1, 2)
	// Each PE owns its own bit pattern on its right neighbour's element.
	bit := T(1) << uint(me)
	if old, err := shmem.AtomicFetchOr(p, el, bit, target); err != nil || old&0xF0 != 0xF0 {
		return fmt.Errorf("FetchOr old = %#x, %v", old, err)
	}
	if err := p.BarrierAll(); err != nil {
		return err
	}
	// Only the left neighbour touched my element.
	left := (me + n - 1) % n
	if got := x.Local(p)[1]; got != T(0xF0)|T(1)<<uint(left) {
		return fmt.Errorf("after FetchOr = %#x", got)
	}
	if err := p.BarrierAll(); err != nil {
		return err
	}
	old, err := shmem.AtomicFetchAnd(p, el, T(0x30), target)
	if err != nil || old != T(0xF0)|T(1)<<uint(me) {
		return fmt.Errorf("FetchAnd old = %#x, %v", old, err)
	}
	old, err = shmem.AtomicFetchXor(p, el, T(0x11), target)
	if err != nil || old != T(0x30)&(T(0xF0)|T(1)<<uint(me)) {
		return fmt.Errorf("FetchXor old = %#x, %v", old, err)
	}
	var fetched T
	if err := shmem.AtomicFetchXorNBI(p, &fetched, el, T(0x11), target); err != nil {
		return err
	}
	var swapped T
	if err := shmem.AtomicCompareSwapNBI(p, &swapped, x.Slice(2, 3), T(0), T(me+5), target); err != nil {
		return err
	}
	if err := p.Quiet(); err != nil {
		return err
	}
	if fetched != T(0x30)^T(0x11) || swapped != 0 {
		return fmt.Errorf("NBI fetches = %#x, %#x after Quiet", fetched, swapped)
	}
	if err := p.BarrierAll(); err != nil {
		return err
	}
	if got := x.Local(p); got[0] != 0 || got[1] != T(0x30) || got[2] != T(left+5) {
		return fmt.Errorf("final = %v (left %d)", got, left)
	}
	if err := p.BarrierAll(); err != nil {
		return err
	}
	// Non-fetching forms, and their effects after a barrier.
	// Unordered without Fence (the Lazy simulator reorders them).
	if err := shmem.AtomicXor(p, el, T(0xFF), target); err != nil {
		return err
	}
	p.Fence()
	if err := shmem.AtomicAnd(p, el, T(0x0F), target); err != nil {
		return err
	}
	p.Fence()
	if err := shmem.AtomicOr(p, el, T(0x100), target); err != nil {
		return err
	}
	if err := p.BarrierAll(); err != nil {
		return err
	}
	if got := x.Local(p)[1]; got != T(0x10F) {
		return fmt.Errorf("after Xor/And/Or = %#x, want 0x10f", got)
	}
	return p.BarrierAll()
}

func TestSpecAtomicValuesUint32(t *testing.T) { atomicValuesOn[uint32](t) }
func TestSpecAtomicValuesInt32(t *testing.T)  { atomicValuesOn[int32](t) }
func TestSpecAtomicValuesUint64(t *testing.T) { atomicValuesOn[uint64](t) }
func TestSpecAtomicValuesInt(t *testing.T)    { atomicValuesOn[int](t) }

// Fetch, Set, Swap and their NBI forms on float32 and float64, on an
// element past the first.
func TestSpecAtomicFloats(t *testing.T) { bothDeliveries(t, 2, specAtomicFloats) }

func specAtomicFloats(p *shmem.PE) error {
	f, err := shmem.Calloc[float32](p, 3)
	if err != nil {
		return err
	}
	d, err := shmem.Calloc[float64](p, 3)
	if err != nil {
		return err
	}
	other := 1 - p.MyPE()
	if err := shmem.AtomicSet(p, f.Slice(1, 2), float32(-1.5), other); err != nil {
		return err
	}
	if err := shmem.AtomicSet(p, d.Slice(2, 3), 2.25, other); err != nil {
		return err
	}
	if err := p.BarrierAll(); err != nil {
		return err
	}
	if v, err := shmem.AtomicFetch(p, f.Slice(1, 2), other); err != nil || v != -1.5 {
		return fmt.Errorf("Fetch float32 = %v, %v", v, err)
	}
	if err := p.BarrierAll(); err != nil {
		return err
	}
	if old, err := shmem.AtomicSwap(p, d.Slice(2, 3), 7.5, p.MyPE()); err != nil || old != 2.25 {
		return fmt.Errorf("Swap float64 = %v, %v", old, err)
	}
	var of float32
	var od float64
	if err := shmem.AtomicSwapNBI(p, &of, f.Slice(1, 2), 3.0, p.MyPE()); err != nil {
		return err
	}
	if err := shmem.AtomicFetchNBI(p, &od, d.Slice(2, 3), p.MyPE()); err != nil {
		return err
	}
	if err := p.Quiet(); err != nil {
		return err
	}
	if of != -1.5 || od != 7.5 {
		return fmt.Errorf("NBI float fetches = %v, %v", of, od)
	}
	if l := f.Local(p); l[0] != 0 || l[1] != 3 || l[2] != 0 {
		return fmt.Errorf("float32 neighbours touched: %v", l)
	}
	return p.BarrierAll()
}
