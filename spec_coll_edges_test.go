package shmem_test

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/goshmem/shmem"
)

// Collectives on a team of stride 2 (world PEs 1, 3, 5 of 7), with a root
// other than 0, per-PE Collect sizes including 0, Alltoalls with strides
// and every reduction operator; the PEs outside the team take no part.
func TestSpecCollectivesStridedTeam(t *testing.T) { bothDeliveries(t, 7, specCollectivesStridedTeam) }

func specCollectivesStridedTeam(p *shmem.PE) error {
	w := p.TeamWorld()
	tm, err := w.SplitStrided(1, 2, 3)
	if err != nil {
		return err
	}
	// Symmetric allocations are world-collective: everyone allocates.
	src, err := shmem.Calloc[int64](p, 12)
	if err != nil {
		return err
	}
	dst, err := shmem.Calloc[int64](p, 40)
	if err != nil {
		return err
	}
	if tm == nil {
		return p.BarrierAll()
	}
	me, np := tm.MyPE(), tm.NPEs()
	if np != 3 || me != (p.MyPE()-1)/2 {
		return fmt.Errorf("team pe %d of %d", me, np)
	}
	l := src.Local(p)
	for i := range l {
		l[i] = int64(100*me + i)
	}
	// Broadcast from team PE 2 (world 5), 5 elements.
	if err := shmem.Broadcast(tm, dst.Slice(0, 5), src.Slice(0, 5), 2); err != nil {
		return err
	}
	if got := dst.Local(p)[:6]; !slices.Equal(got, []int64{200, 201, 202, 203, 204, 0}) {
		return fmt.Errorf("Broadcast root 2: %v", got)
	}
	// Collect: team PE k contributes k elements.
	clear(dst.Local(p))
	if err := shmem.Collect(tm, dst.Slice(0, 4), src.Slice(0, me)); err != nil {
		return err
	}
	if got := dst.Local(p)[:4]; !slices.Equal(got, []int64{100, 200, 201, 0}) {
		return fmt.Errorf("Collect sizes 0,1,2: %v", got)
	}
	if err := tm.Barrier(); err != nil { // dst reused: everyone has read it
		return err
	}
	// FCollect of 2 each.
	if err := shmem.FCollect(tm, dst.Slice(0, 6), src.Slice(3, 5)); err != nil {
		return err
	}
	if got := dst.Local(p)[:6]; !slices.Equal(got, []int64{3, 4, 103, 104, 203, 204}) {
		return fmt.Errorf("FCollect: %v", got)
	}
	if err := tm.Barrier(); err != nil {
		return err
	}
	// Alltoalls: n = 2 per pair, source stride 2, dest stride 3.
	clear(dst.Local(p))
	if err := tm.Barrier(); err != nil {
		return err
	}
	if err := shmem.Alltoalls(tm, dst.Slice(0, 3*(np*2-1)+1), src.Slice(0, 2*(np*2-1)+1), 3, 2, 2); err != nil {
		return err
	}
	d := dst.Local(p)
	for i := 0; i < np; i++ {
		for k := 0; k < 2; k++ {
			// From PE i: its src[2*(me*2+k)].
			want := int64(100*i + 2*(me*2+k))
			if got := d[3*(i*2+k)]; got != want {
				return fmt.Errorf("Alltoalls from %d elem %d = %d, want %d (dst %v)", i, k, got, want, d[:16])
			}
		}
	}
	for j := range d[:16] {
		if j%3 != 0 && d[j] != 0 {
			return fmt.Errorf("Alltoalls wrote between strides at %d: %v", j, d[:16])
		}
	}
	if err := tm.Barrier(); err != nil {
		return err
	}
	// Reductions, 3 elements each (nreduce > 1).
	vals := []int64{int64(me + 1), int64(-2 * (me + 1)), int64(1<<uint(me) | 8)}
	copy(src.Local(p), vals)
	for _, c := range []struct {
		op   shmem.Op
		want []int64
	}{
		{shmem.OpSum, []int64{6, -12, 8 + 7 + 16}},
		{shmem.OpProd, []int64{6, -48, 9 * 10 * 12}},
		{shmem.OpMin, []int64{1, -6, 9}},
		{shmem.OpMax, []int64{3, -2, 12}},
		{shmem.OpAnd, []int64{1 & 2 & 3, -2 & -4 & -6, 8}},
		{shmem.OpOr, []int64{3, -2 | -4 | -6, 15}},
		{shmem.OpXor, []int64{0, -2 ^ -4 ^ -6, 9 ^ 10 ^ 12}},
	} {
		if err := shmem.Reduce(tm, c.op, dst.Slice(0, 3), src.Slice(0, 3)); err != nil {
			return err
		}
		if got := dst.Local(p)[:3]; !slices.Equal(got, c.want) {
			return fmt.Errorf("Reduce op %v = %v, want %v", c.op, got, c.want)
		}
	}
	// Zero elements: every collective is a no-op that succeeds.
	if err := shmem.Broadcast(tm, dst.Slice(0, 0), src.Slice(0, 0), 1); err != nil {
		return err
	}
	if err := shmem.Reduce(tm, shmem.OpSum, dst.Slice(0, 0), src.Slice(0, 0)); err != nil {
		return err
	}
	if err := shmem.FCollect(tm, dst.Slice(0, 0), src.Slice(0, 0)); err != nil {
		return err
	}
	if err := shmem.Alltoall(tm, dst.Slice(0, 0), src.Slice(0, 0)); err != nil {
		return err
	}
	if err := shmem.Alltoalls(tm, dst.Slice(0, 0), src.Slice(0, 0), 1, 1, 0); err != nil {
		return err
	}
	if err := shmem.Collect(tm, dst.Slice(0, 0), src.Slice(0, 0)); err != nil {
		return err
	}
	if err := tm.Destroy(); err != nil {
		return err
	}
	return p.BarrierAll()
}

// Reductions on the row and column teams of Split2D with an xrange that
// does not divide the world (7 PEs, xrange 3: rows of 3, 3, 1; columns of
// 3, 2, 2), including complex sum and product and float min/max.
func TestSpecReduceOnSplit2D(t *testing.T) { bothDeliveries(t, 7, specReduceOnSplit2D) }

func specReduceOnSplit2D(p *shmem.PE) error {
	me := p.MyPE()
	xt, yt, err := p.TeamWorld().Split2D(3)
	if err != nil {
		return err
	}
	if xt.MyPE() != me%3 || yt.MyPE() != me/3 {
		return fmt.Errorf("x %d y %d", xt.MyPE(), yt.MyPE())
	}
	wantX := min(3, 7-me/3*3)
	wantY := (7 - me%3 + 2) / 3
	if xt.NPEs() != wantX || yt.NPEs() != wantY {
		return fmt.Errorf("row of %d (want %d), column of %d (want %d)", xt.NPEs(), wantX, yt.NPEs(), wantY)
	}
	c, err := shmem.Calloc[float64](p, 4)
	if err != nil {
		return err
	}
	r, err := shmem.Calloc[float64](p, 4)
	if err != nil {
		return err
	}
	// (me+1) + i·1 as a complex number, twice.
	copy(c.Local(p), []float64{float64(me + 1), 1, float64(me), -1})
	if err := shmem.ReduceComplex(yt, shmem.OpProd, r, c); err != nil {
		return err
	}
	wantP0, wantP1 := complex(1, 0), complex(1, 0)
	var wantS complex128
	for pe := me % 3; pe < 7; pe += 3 {
		wantP0 *= complex(float64(pe+1), 1)
		wantP1 *= complex(float64(pe), -1)
		wantS += complex(float64(pe+1), 1)
	}
	got := shmem.ComplexView[float64, complex128](r.Local(p))
	if got[0] != wantP0 || got[1] != wantP1 {
		return fmt.Errorf("column complex prod = %v, want %v %v", got, wantP0, wantP1)
	}
	if err := shmem.ReduceComplex(yt, shmem.OpSum, r.Slice(0, 2), c.Slice(0, 2)); err != nil {
		return err
	}
	if got[0] != wantS {
		return fmt.Errorf("column complex sum = %v, want %v", got[0], wantS)
	}
	// Float min/max over the row, in place.
	copy(c.Local(p), []float64{float64(-me), float64(me) + 0.5, math.Inf(1), 0})
	if err := shmem.Reduce(xt, shmem.OpMax, c.Slice(0, 3), c.Slice(0, 3)); err != nil {
		return err
	}
	row0 := me / 3 * 3
	last := row0 + wantX - 1
	if l := c.Local(p); l[0] != float64(-row0) || l[1] != float64(last)+0.5 || !math.IsInf(l[2], 1) {
		return fmt.Errorf("row max in place = %v (row %d..%d)", l, row0, last)
	}
	return p.BarrierAll()
}
