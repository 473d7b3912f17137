package shmem

import (
	"github.com/goshmem/shmem/internal/core"
	"unsafe"

	"github.com/goshmem/shmem/internal/coll"
	"github.com/goshmem/shmem/internal/errs"
)

// ReduceComplex is the complex sum and product reduction
// (shmem_complexf_sum_reduce, shmem_complexd_prod_reduce and friends) over
// Syms of float32 (complex64) or float64 (complex128) holding each complex
// number as its real part followed by its imaginary part, the layout of
// C's float _Complex and Go's complex64 (ComplexView converts). src.Len()
// must be even; op is OpSum or OpProd, anything else is
// ErrInvalidArgument on every member. Otherwise it is Reduce: an
// all-reduce over t, in place allowed, the same bits on every member.
func ReduceComplex[F ~float32 | ~float64](t *Team, op Op, dst, src Sym[F]) error {
	const name = "ReduceComplex"
	p, err := teamPE(t, name)
	if err != nil {
		return err
	}
	if t0, ok := p.c.CollStart(); ok {
		defer p.c.CollDone(core.CollReduce, t0)
	}
	n, size := src.n, int(elemSize[F]())
	c := argCheck{p: p, op: name}
	var f coll.Kernel
	switch {
	case n%2 != 0:
		c.fail("%d values are not whole complex numbers", n)
	case op == OpSum && size == 4:
		f = complexSumK[complex64]{}
	case op == OpSum:
		f = complexSumK[complex128]{}
	case op == OpProd && size == 4:
		f = complexProdK[complex64]{}
	case op == OpProd:
		f = complexProdK[complex128]{}
	default:
		c.fail("complex reductions are OpSum and OpProd, not %d", op)
	}
	srcOff := c.off(src.check(p, name, errs.NoPE, 0, n))
	dstOff := c.off(dst.check(p, name, errs.NoPE, 0, n))
	if srcOff != dstOff && overlap(srcOff, n*size, dstOff, n*size) {
		c.fail("source and destination overlap without being the same")
	}
	// The type code differs from the float Reduce's, so a member that
	// calls Reduce against this one's ReduceComplex is told.
	a := coll.Args{Kind: coll.KindReduce, Type: 3<<8 | typeCode[F](), Elem: size, Count: n, Op: int(op), DstOff: dst.off, DstLen: dst.n, Err: c.err}
	return t.t.Reduce(a, dstOff, srcOff, n*size, f)
}

// ComplexView returns the complex numbers that a slice of interleaved real
// and imaginary parts holds, sharing its memory: C is complex64 for
// float32 parts and complex128 for float64 ones, e.g.
// ComplexView[float32, complex64](s.Local(p)). A trailing odd value is
// left out; mismatched widths give nil.
func ComplexView[F ~float32 | ~float64, C ~complex64 | ~complex128](v []F) []C {
	var f F
	var c C
	if len(v) < 2 || 2*unsafe.Sizeof(f) != unsafe.Sizeof(c) {
		return nil
	}
	return unsafe.Slice((*C)(unsafe.Pointer(unsafe.SliceData(v))), len(v)/2)
}
