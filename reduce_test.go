package shmem_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/goshmem/shmem"
)

// reduceCase reduces values v(pe, i) over n PEs with op for T, and checks
// against the golden fold computed here in PE order.
func reduceCase[T shmem.Elem](t *testing.T, n, count int, op shmem.Op, v func(pe, i int) T, fold func(a, b T) T, inPlace bool) {
	t.Helper()
	runSim(t, n, func(p *shmem.PE) error {
		src, err := shmem.Malloc[T](p, count)
		if err != nil {
			return err
		}
		dst := src
		if !inPlace {
			if dst, err = shmem.Malloc[T](p, count); err != nil {
				return err
			}
		}
		for i := range src.Local(p) {
			src.Local(p)[i] = v(p.MyPE(), i)
		}
		if err := shmem.Reduce(p.TeamWorld(), op, dst, src); err != nil {
			return err
		}
		return check(fmt.Sprintf("reduce %T op %d", *new(T), op), p.MyPE(), dst.Local(p), func(i int) T {
			acc := v(0, i)
			for q := 1; q < n; q++ {
				acc = fold(acc, v(q, i))
			}
			return acc
		})
	})
}

func arith[T shmem.Elem](t *testing.T, n, count int, v func(pe, i int) T) {
	reduceCase(t, n, count, shmem.OpSum, v, func(a, b T) T { return a + b }, false)
	reduceCase(t, n, count, shmem.OpProd, v, func(a, b T) T { return a * b }, true)
	reduceCase(t, n, count, shmem.OpMin, v, func(a, b T) T { return min(a, b) }, false)
	reduceCase(t, n, count, shmem.OpMax, v, func(a, b T) T { return max(a, b) }, false)
}

func bitwise[T shmem.Integer | ~int8 | ~int16 | ~uint8 | ~uint16](t *testing.T, n, count int, v func(pe, i int) T) {
	reduceCase(t, n, count, shmem.OpAnd, v, func(a, b T) T { return a & b }, false)
	reduceCase(t, n, count, shmem.OpOr, v, func(a, b T) T { return a | b }, true)
	reduceCase(t, n, count, shmem.OpXor, v, func(a, b T) T { return a ^ b }, false)
}

// small values keep float sums and products exact, so any order of
// combination gives the golden bits.
func small(pe, i int) int { return (pe*7+i*3)%5 + 1 }

func TestReduceAllTypes(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 8} {
		for _, count := range []int{0, 1, 13, 9000} {
			t.Run(fmt.Sprintf("n%d_%d", n, count), func(t *testing.T) {
				if count > 1000 && n > 3 && testing.Short() {
					t.Skip()
				}
				arith(t, n, count, func(pe, i int) int8 { return int8(small(pe, i) * 31) })
				arith(t, n, count, func(pe, i int) int16 { return int16(small(pe, i)*1000 - 2500) })
				arith(t, n, count, func(pe, i int) int32 { return int32(small(pe, i)*123456789 - pe) })
				arith(t, n, count, func(pe, i int) int64 { return int64(small(pe, i))<<40 - int64(i) })
				arith(t, n, count, func(pe, i int) int { return small(pe, i)*99991 - 7 })
				arith(t, n, count, func(pe, i int) uint8 { return uint8(small(pe, i) * 50) })
				arith(t, n, count, func(pe, i int) uint16 { return uint16(small(pe, i) * 20000) })
				arith(t, n, count, func(pe, i int) uint32 { return uint32(small(pe, i)) * 3000000000 })
				arith(t, n, count, func(pe, i int) uint64 { return uint64(small(pe, i)) << 62 })
				arith(t, n, count, func(pe, i int) uint { return uint(small(pe, i)) * 1e18 })
				arith(t, n, count, func(pe, i int) float32 { return float32(small(pe, i)) - 2.5 })
				arith(t, n, count, func(pe, i int) float64 { return float64(small(pe, i)) * 0.25 })
				bitwise(t, n, count, func(pe, i int) int32 { return int32(small(pe, i)*0x1111 ^ pe<<i%30) })
				bitwise(t, n, count, func(pe, i int) uint64 { return uint64(small(pe, i))<<(i%60) | uint64(pe) })
				bitwise(t, n, count, func(pe, i int) int8 { return int8(small(pe, i) << (pe % 4)) })
				bitwise(t, n, count, func(pe, i int) uint16 { return uint16(small(pe, i) << (i % 12)) })
				h := func(pe, i int) shmem.Float16 { return shmem.NewFloat16(float32(small(pe, i)) - 3) }
				b := func(pe, i int) shmem.BFloat16 { return shmem.NewBFloat16(float32(small(pe, i)) * 0.5) }
				reduceCase(t, n, count, shmem.OpSum, h, func(a, b shmem.Float16) shmem.Float16 { return shmem.NewFloat16(a.Float32() + b.Float32()) }, false)
				reduceCase(t, n, count, shmem.OpProd, h, func(a, b shmem.Float16) shmem.Float16 { return shmem.NewFloat16(a.Float32() * b.Float32()) }, true)
				reduceCase(t, n, count, shmem.OpMin, h, func(a, b shmem.Float16) shmem.Float16 { return shmem.NewFloat16(min(a.Float32(), b.Float32())) }, false)
				reduceCase(t, n, count, shmem.OpMax, h, func(a, b shmem.Float16) shmem.Float16 { return shmem.NewFloat16(max(a.Float32(), b.Float32())) }, false)
				reduceCase(t, n, count, shmem.OpSum, b, func(a, c shmem.BFloat16) shmem.BFloat16 { return shmem.NewBFloat16(a.Float32() + c.Float32()) }, false)
				reduceCase(t, n, count, shmem.OpProd, b, func(a, c shmem.BFloat16) shmem.BFloat16 { return shmem.NewBFloat16(a.Float32() * c.Float32()) }, false)
				reduceCase(t, n, count, shmem.OpMin, b, func(a, c shmem.BFloat16) shmem.BFloat16 { return shmem.NewBFloat16(min(a.Float32(), c.Float32())) }, true)
				reduceCase(t, n, count, shmem.OpMax, b, func(a, c shmem.BFloat16) shmem.BFloat16 { return shmem.NewBFloat16(max(a.Float32(), c.Float32())) }, false)
			})
		}
	}
}

func TestReduceProdWraps(t *testing.T) {
	reduceCase(t, 5, 3, shmem.OpProd, func(pe, i int) int32 { return int32(1<<20 + pe + i) }, func(a, b int32) int32 { return a * b }, false)
}

func TestReduceBitwiseFloats(t *testing.T) {
	for _, op := range []shmem.Op{shmem.OpAnd, shmem.OpOr, shmem.OpXor, shmem.Op(99)} {
		errorsOnEvery(t, 2, shmem.ErrInvalidArgument, func(p *shmem.PE) error {
			s, _ := shmem.Malloc[shmem.Float16](p, 2)
			return shmem.Reduce(p.TeamWorld(), op, s, s)
		})
		errorsOnEvery(t, 2, shmem.ErrInvalidArgument, func(p *shmem.PE) error {
			s, _ := shmem.Malloc[float64](p, 2)
			return shmem.Reduce(p.TeamWorld(), op, s, s)
		})
	}
}

func TestFloat16Conversions(t *testing.T) {
	for _, c := range []struct {
		in   float32
		want float32
	}{{1, 1}, {0.1, 0.0999755859375}, {65504, 65504}, {1e6, float32(math.Inf(1))}, {-2.5, -2.5}, {1 + 1.0/2048, 1}, {1 + 3.0/2048, 1 + 2.0/1024}} {
		if got := shmem.NewFloat16(c.in).Float32(); got != c.want {
			t.Errorf("Float16(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	for _, c := range []struct {
		in   float32
		want float32
	}{{1, 1}, {1 + 1.0/256, 1}, {1 + 3.0/256, 1 + 2.0/128}, {-3, -3}, {3.4e38, float32(math.Inf(1))}} {
		if got := shmem.NewBFloat16(c.in).Float32(); got != c.want {
			t.Errorf("BFloat16(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	nan := float32(math.NaN())
	if f := shmem.NewBFloat16(nan).Float32(); f == f {
		t.Error("BFloat16 NaN is not NaN")
	}
	if f := shmem.NewFloat16(nan).Float32(); f == f {
		t.Error("Float16 NaN is not NaN")
	}
}

// floatBits are the encodings TestReduceMinMaxNaN builds its values from,
// for one float type: a NaN, another NaN with larger bits, -0 and a
// number from an integer.
type floatBits[T shmem.Elem] struct {
	nan, bigNaN, negZero T
	num                  func(int) T
	bits                 func(T) uint64
}

// minMaxNaN reduces, over n PEs, four elements with OpMin and OpMax and
// checks every member's bits: element 0 is NaN on nanPE and a number
// elsewhere; element 1 is a NaN on PE 0 and a NaN with larger bits on PE
// n-1; element 2 is -0 on even PEs and +0 on odd ones; element 3 is the PE
// number.
func minMaxNaN[T shmem.Elem](t *testing.T, f floatBits[T], n, nanPE int) {
	t.Helper()
	run(t, n, func(p *shmem.PE) error {
		me := p.MyPE()
		src, err := shmem.Malloc[T](p, 4)
		if err != nil {
			return err
		}
		lo, _ := shmem.Malloc[T](p, 4)
		hi, err := shmem.Malloc[T](p, 4)
		if err != nil {
			return err
		}
		v := src.Local(p)
		v[0], v[1], v[2], v[3] = f.num(me+1), f.num(me+1), f.num(0), f.num(me)
		if me == nanPE {
			v[0] = f.nan
		}
		switch me {
		case 0:
			v[1] = f.nan
		case n - 1:
			v[1] = f.bigNaN
		}
		if me%2 == 0 {
			v[2] = f.negZero
		}
		if err := shmem.Reduce(p.TeamWorld(), shmem.OpMin, lo, src); err != nil {
			return err
		}
		if err := shmem.Reduce(p.TeamWorld(), shmem.OpMax, hi, src); err != nil {
			return err
		}
		wantLo := []T{f.nan, f.bigNaN, f.negZero, f.num(0)}
		wantHi := []T{f.nan, f.bigNaN, f.num(0), f.num(n - 1)}
		for i := range 4 {
			if g, w := f.bits(lo.Local(p)[i]), f.bits(wantLo[i]); g != w {
				return fmt.Errorf("OpMin element %d = %#x, want %#x (NaN on PE %d)", i, g, w, nanPE)
			}
			if g, w := f.bits(hi.Local(p)[i]), f.bits(wantHi[i]); g != w {
				return fmt.Errorf("OpMax element %d = %#x, want %#x (NaN on PE %d)", i, g, w, nanPE)
			}
		}
		return nil
	})
}

// TestReduceMinMaxNaN: float Min and Max propagate a NaN from any PE, and
// give every member the same bits (of two NaNs, the larger bits; -0 below
// +0) whatever order the algorithm combined the values in. They kept the
// first operand when a comparison with NaN failed, so that PEs combining
// in different orders got NaN or a number.
func TestReduceMinMaxNaN(t *testing.T) {
	f64 := floatBits[float64]{
		nan: math.Float64frombits(0x7ff8000000000001), bigNaN: math.Float64frombits(0x7ff80000000000ab),
		negZero: math.Copysign(0, -1), num: func(i int) float64 { return float64(i) }, bits: math.Float64bits,
	}
	f32 := floatBits[float32]{
		nan: math.Float32frombits(0x7fc00001), bigNaN: math.Float32frombits(0x7fc000ab),
		negZero: float32(math.Copysign(0, -1)), num: func(i int) float32 { return float32(i) },
		bits: func(x float32) uint64 { return uint64(math.Float32bits(x)) },
	}
	h16 := floatBits[shmem.Float16]{
		nan: 0x7e01, bigNaN: 0x7e0a, negZero: 0x8000,
		num: func(i int) shmem.Float16 { return shmem.NewFloat16(float32(i)) }, bits: func(x shmem.Float16) uint64 { return uint64(x) },
	}
	b16 := floatBits[shmem.BFloat16]{
		nan: 0x7fc1, bigNaN: 0x7fca, negZero: 0x8000,
		num: func(i int) shmem.BFloat16 { return shmem.NewBFloat16(float32(i)) }, bits: func(x shmem.BFloat16) uint64 { return uint64(x) },
	}
	for _, n := range []int{2, 3, 4} {
		for nanPE := range n {
			t.Run(fmt.Sprintf("n%d_nan%d", n, nanPE), func(t *testing.T) {
				minMaxNaN(t, f64, n, nanPE)
				minMaxNaN(t, f32, n, nanPE)
				minMaxNaN(t, h16, n, nanPE)
				minMaxNaN(t, b16, n, nanPE)
			})
		}
	}
}
