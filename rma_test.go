package shmem_test

import (
	"fmt"
	"testing"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/sim"
)

// putGetRing has every PE put a pattern into its right neighbour and get
// one back from its left neighbour, for element type T.
func putGetRing[T shmem.Elem](p *shmem.PE, n int, conv func(int) T) error {
	me, np := p.MyPE(), p.NPEs()
	right, left := (me+1)%np, (me-1+np)%np
	s, err := shmem.Calloc[T](p, n)
	if err != nil {
		return err
	}
	src := make([]T, n)
	for i := range src {
		src[i] = conv(me*1000 + i)
	}
	if err := shmem.Put(p, s, src, right); err != nil {
		return err
	}
	if err := p.BarrierAll(); err != nil {
		return err
	}
	for i, v := range s.Local(p) {
		if err := want(p, fmt.Sprintf("%T local[%d]", v, i), v, conv(left*1000+i)); err != nil {
			return err
		}
	}
	got := make([]T, n)
	if err := shmem.Get(p, got, s, left); err != nil {
		return err
	}
	for i, v := range got {
		// left's part holds what left-of-left put there.
		if err := want(p, fmt.Sprintf("%T got[%d]", v, i), v, conv(((left-1+np)%np)*1000+i)); err != nil {
			return err
		}
	}
	if err := p.BarrierAll(); err != nil {
		return err
	}
	return shmem.Free(p, s)
}

func TestPutGetAllTypes(t *testing.T) {
	run(t, 3, func(p *shmem.PE) error {
		const n = 37 // odd, so sizes are not multiples of 8 bytes
		return joinFirst(
			putGetRing(p, n, func(i int) int8 { return int8(i) }),
			putGetRing(p, n, func(i int) int16 { return int16(i) }),
			putGetRing(p, n, func(i int) int32 { return int32(i) }),
			putGetRing(p, n, func(i int) int64 { return int64(i) << 20 }),
			putGetRing(p, n, func(i int) int { return -i }),
			putGetRing(p, n, func(i int) uint8 { return uint8(i) }),
			putGetRing(p, n, func(i int) uint16 { return uint16(i) }),
			putGetRing(p, n, func(i int) uint32 { return uint32(i) }),
			putGetRing(p, n, func(i int) uint64 { return uint64(i) << 40 }),
			putGetRing(p, n, func(i int) uint { return uint(i) }),
			putGetRing(p, n, func(i int) float32 { return float32(i) + 0.5 }),
			putGetRing(p, n, func(i int) float64 { return float64(i) / 3 }),
		)
	})
}

// joinFirst returns the first non-nil error.
func joinFirst(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

func TestRingSizes(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 8, 64} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			run(t, n, func(p *shmem.PE) error {
				return putGetRing(p, 5, func(i int) int64 { return int64(i) })
			})
		})
	}
}

func TestSmoke1024PEs(t *testing.T) {
	if testing.Short() {
		t.Skip("1024 PEs")
	}
	run(t, 1024, func(p *shmem.PE) error {
		s, err := shmem.Calloc[int64](p, 1)
		if err != nil {
			return err
		}
		if err := shmem.AtomicAdd(p, s, int64(p.MyPE()+1), 0); err != nil {
			return err
		}
		if err := p.BarrierAll(); err != nil {
			return err
		}
		v, err := shmem.G(p, s, 0)
		if err != nil {
			return err
		}
		return want(p, "sum of ranks+1", v, int64(1024*1025/2))
	}, sim.WithHeapSize(1<<20)) // two team slots of 1024 PEs each need ~200 KiB

}

func TestNBIAndQuiet(t *testing.T) {
	run(t, 2, func(p *shmem.PE) error {
		me, other := p.MyPE(), 1-p.MyPE()
		s, err := shmem.Calloc[int32](p, 100)
		if err != nil {
			return err
		}
		src := make([]int32, 100)
		for i := range src {
			src[i] = int32(me*100 + i)
		}
		if err := shmem.PutNBI(p, s, src, other); err != nil {
			return err
		}
		clear(src) // the source may be reused as soon as PutNBI returns
		if err := p.Quiet(); err != nil {
			return err
		}
		if err := p.SyncAll(); err != nil {
			return err
		}
		got := make([]int32, 100)
		if err := shmem.GetNBI(p, got, s, other); err != nil {
			return err
		}
		if err := p.Quiet(); err != nil {
			return err
		}
		for i := range got {
			// other's part holds what I put there.
			if err := want(p, fmt.Sprintf("GetNBI[%d]", i), got[i], int32(me*100+i)); err != nil {
				return err
			}
		}
		return nil
	})
}

func TestPG(t *testing.T) {
	run(t, 2, func(p *shmem.PE) error {
		other := 1 - p.MyPE()
		i8, _ := shmem.Calloc[int8](p, 2)
		u16, _ := shmem.Calloc[uint16](p, 2)
		f32, _ := shmem.Calloc[float32](p, 2)
		f64, _ := shmem.Calloc[float64](p, 2)
		u64, err := shmem.Calloc[uint64](p, 2)
		if err != nil {
			return err
		}
		v := p.MyPE() + 1
		for _, e := range []error{
			shmem.P(p, i8.Slice(1, 2), int8(-v), other),
			shmem.P(p, u16.Slice(1, 2), uint16(v*300), other),
			shmem.P(p, f32.Slice(1, 2), float32(v)/4, other),
			shmem.P(p, f64.Slice(1, 2), float64(v)/8, other),
			shmem.P(p, u64.Slice(1, 2), uint64(v)<<60, other),
		} {
			if e != nil {
				return e
			}
		}
		if err := p.BarrierAll(); err != nil {
			return err
		}
		// I read my own element 1 remotely through G from the other side's
		// view: G on other returns what I wrote there.
		w := p.MyPE() + 1
		a, _ := shmem.G(p, i8.Slice(1, 2), other)
		b, _ := shmem.G(p, u16.Slice(1, 2), other)
		c, _ := shmem.G(p, f32.Slice(1, 2), other)
		d, _ := shmem.G(p, f64.Slice(1, 2), other)
		e, err := shmem.G(p, u64.Slice(1, 2), other)
		if err != nil {
			return err
		}
		return joinFirst(want(p, "int8", a, int8(-w)), want(p, "uint16", b, uint16(w*300)),
			want(p, "float32", c, float32(w)/4), want(p, "float64", d, float64(w)/8),
			want(p, "uint64", e, uint64(w)<<60),
			want(p, "untouched element 0", i8.Local(p)[0], 0))
	})
}

func TestIPutIGet(t *testing.T) {
	run(t, 2, func(p *shmem.PE) error {
		other := 1 - p.MyPE()
		s, err := shmem.Calloc[int64](p, 10)
		if err != nil {
			return err
		}
		src := []int64{1, -1, 2, -1, 3, -1, 4}
		// src[0,2,4,6] -> dst[1,4,7] (n=3, dstStride 3, srcStride 2)
		if err := shmem.IPut(p, s.Slice(1, 10), src, 3, 2, 3, other); err != nil {
			return err
		}
		if err := p.BarrierAll(); err != nil {
			return err
		}
		exp := []int64{0, 1, 0, 0, 2, 0, 0, 3, 0, 0}
		for i, v := range s.Local(p) {
			if err := want(p, fmt.Sprintf("IPut dst[%d]", i), v, exp[i]); err != nil {
				return err
			}
		}
		got := []int64{9, 9, 9, 9, 9, 9}
		// src[1,4,7] on other -> got[0,2,4]
		if err := shmem.IGet(p, got, s.Slice(1, 10), 2, 3, 3, other); err != nil {
			return err
		}
		expGot := []int64{1, 9, 2, 9, 3, 9}
		for i := range got {
			if err := want(p, fmt.Sprintf("IGet got[%d]", i), got[i], expGot[i]); err != nil {
				return err
			}
		}
		// Zero elements is a no-op, even with an empty source.
		return joinFirst(shmem.IPut(p, s, nil, 1, 1, 0, other), shmem.IGet(p, nil, s, 1, 1, 0, other))
	})
}

func TestZeroLength(t *testing.T) {
	run(t, 2, func(p *shmem.PE) error {
		other := 1 - p.MyPE()
		s, err := shmem.Malloc[int32](p, 0)
		if err != nil {
			return err
		}
		if err := want(p, "Len", s.Len(), 0); err != nil {
			return err
		}
		t2, err := shmem.Calloc[int32](p, 4)
		if err != nil {
			return err
		}
		sig, err := shmem.Calloc[uint64](p, 1)
		if err != nil {
			return err
		}
		for _, e := range []error{
			shmem.Put(p, s, nil, other), shmem.Get(p, []int32{}, s, other),
			shmem.PutNBI(p, s, nil, other), shmem.GetNBI(p, nil, s, other),
			shmem.Put(p, t2.Slice(4, 4), nil, other),
			shmem.PutSignal(p, t2, nil, sig, 7, shmem.SignalSet, other),
		} {
			if e != nil {
				return e
			}
		}
		if err := p.BarrierAll(); err != nil {
			return err
		}
		if err := want(p, "signal after empty PutSignal", shmem.SignalFetch(p, sig), uint64(7)); err != nil {
			return err
		}
		if err := want(p, "Local of empty", len(s.Local(p)), 0); err != nil {
			return err
		}
		for _, v := range t2.Local(p) {
			if v != 0 {
				return fmt.Errorf("empty puts changed data: %v", t2.Local(p))
			}
		}
		return shmem.Free(p, s)
	})
}

func TestPutSignal(t *testing.T) {
	run(t, 4, func(p *shmem.PE) error {
		me, np := p.MyPE(), p.NPEs()
		data, err := shmem.Calloc[int64](p, 64*np)
		if err != nil {
			return err
		}
		sigAdd, err := shmem.Calloc[uint64](p, 1)
		if err != nil {
			return err
		}
		sigSet, err := shmem.Calloc[uint64](p, np)
		if err != nil {
			return err
		}
		src := make([]int64, 64)
		for i := range src {
			src[i] = int64(me<<16 | i)
		}
		for pe := 0; pe < np; pe++ {
			blk := data.Slice(me*64, me*64+64)
			if me%2 == 0 {
				err = shmem.PutSignal(p, blk, src, sigAdd, 1, shmem.SignalAdd, pe)
			} else {
				err = shmem.PutSignalNBI(p, blk, src, sigAdd, 1, shmem.SignalAdd, pe)
			}
			if err != nil {
				return err
			}
			if err := shmem.PutSignal(p, blk.Slice(0, 0), nil, sigSet.Slice(me, me+1), uint64(me+100), shmem.SignalSet, pe); err != nil {
				return err
			}
		}
		if err := p.Quiet(); err != nil {
			return err
		}
		got, err := shmem.SignalWaitUntil(p, sigAdd, shmem.CmpEQ, uint64(np))
		if err != nil {
			return err
		}
		if err := want(p, "SignalWaitUntil value", got, uint64(np)); err != nil {
			return err
		}
		if err := want(p, "SignalFetch", shmem.SignalFetch(p, sigAdd), uint64(np)); err != nil {
			return err
		}
		// Seeing the whole count means every block arrived.
		local := data.Local(p)
		for pe := 0; pe < np; pe++ {
			for i := 0; i < 64; i++ {
				if err := want(p, fmt.Sprintf("block %d[%d]", pe, i), local[pe*64+i], int64(pe<<16|i)); err != nil {
					return err
				}
			}
			if _, err := shmem.SignalWaitUntil(p, sigSet.Slice(pe, pe+1), shmem.CmpEQ, uint64(pe+100)); err != nil {
				return err
			}
		}
		return nil
	})
}

func TestPtr(t *testing.T) {
	// Two nodes of two PEs: Ptr reaches the PEs of the caller's node only.
	run(t, 4, func(p *shmem.PE) error {
		me := p.MyPE()
		s, err := shmem.Calloc[int64](p, 3)
		if err != nil {
			return err
		}
		s.Local(p)[2] = int64(me + 1)
		if err := p.BarrierAll(); err != nil {
			return err
		}
		for pe := 0; pe < 4; pe++ {
			view, ok := shmem.Ptr(p, s, pe)
			if sameNode := pe/2 == me/2; ok != sameNode {
				return fmt.Errorf("PE %d: Ptr to %d ok=%v, want %v", me, pe, ok, sameNode)
			}
			if ok {
				if err := joinFirst(want(p, "len(Ptr)", len(view), 3), want(p, "Ptr[2]", view[2], int64(pe+1))); err != nil {
					return err
				}
			}
		}
		if err := want(p, "TeamShared size", p.TeamShared().NPEs(), 2); err != nil {
			return err
		}
		if _, ok := shmem.Ptr(p, s, 4); ok {
			return fmt.Errorf("Ptr to PE 4 of 4 succeeded")
		}
		if _, ok := shmem.Ptr(p, shmem.Sym[int64]{}, me); ok {
			return fmt.Errorf("Ptr of the zero Sym succeeded")
		}
		// A store through Ptr is seen by the owner.
		if view, ok := shmem.Ptr(p, s, me^1); ok {
			view[0] = int64(me + 10)
		}
		if err := p.BarrierAll(); err != nil {
			return err
		}
		return want(p, "stored through Ptr", s.Local(p)[0], int64((me^1)+10))
	}, sim.WithNodes(2))
}

func TestTeamPtr(t *testing.T) {
	// Two nodes of two PEs; the team of PEs 1 and 2 spans them.
	run(t, 4, func(p *shmem.PE) error {
		me := p.MyPE()
		s, err := shmem.Calloc[int64](p, 1)
		if err != nil {
			return err
		}
		s.Local(p)[0] = int64(me + 1)
		if err := p.BarrierAll(); err != nil {
			return err
		}
		shared := p.TeamShared()
		for i := range shared.NPEs() {
			view, ok := shmem.TeamPtr(shared, s, i)
			world := shared.TranslatePE(i, p.TeamWorld())
			if !ok {
				return fmt.Errorf("PE %d: TeamPtr to shared PE %d (world %d) failed", me, i, world)
			}
			if err := want(p, "TeamPtr[0]", view[0], int64(world+1)); err != nil {
				return err
			}
		}
		if _, ok := shmem.TeamPtr(shared, s, shared.NPEs()); ok {
			return fmt.Errorf("TeamPtr past the team's last PE succeeded")
		}
		if _, ok := shmem.TeamPtr(nil, s, 0); ok {
			return fmt.Errorf("TeamPtr on a nil team succeeded")
		}
		mid, err := p.TeamWorld().SplitStrided(1, 1, 2)
		if err != nil {
			return err
		}
		if mid != nil {
			// Team PE 0 is world PE 1 and team PE 1 world PE 2: each
			// member reaches itself, and not the other, on another node.
			self, other := mid.MyPE(), 1-mid.MyPE()
			if view, ok := shmem.TeamPtr(mid, s, self); !ok || view[0] != int64(me+1) {
				return fmt.Errorf("PE %d: TeamPtr to itself in the split team: %v %v", me, view, ok)
			}
			if _, ok := shmem.TeamPtr(mid, s, other); ok {
				return fmt.Errorf("PE %d: TeamPtr reached team PE %d on another node", me, other)
			}
			if err := mid.Destroy(); err != nil {
				return err
			}
			if _, ok := shmem.TeamPtr(mid, s, self); ok {
				return fmt.Errorf("TeamPtr on a destroyed team succeeded")
			}
		}
		return p.BarrierAll()
	}, sim.WithNodes(2))
}
