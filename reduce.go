package shmem

import (
	"github.com/goshmem/shmem/internal/core"
	"reflect"

	"github.com/goshmem/shmem/internal/coll"
	"github.com/goshmem/shmem/internal/errs"
)

// Reduce combines src.Len() elements of every member's src with op and
// leaves the result in dst on every member of t (shmem_<op>_reduce, an
// all-reduce). dst may be src (in place); dst.Len() must be at least
// src.Len(). Sum, Prod, Min and Max take every Elem type (integer
// arithmetic wraps as in Go; Float16 and BFloat16 compute in float32 and
// round back after each operation); And, Or and Xor take integers only,
// and floats give ErrInvalidArgument. Min and Max of floats are Go's min
// and max: any NaN gives NaN (of several NaNs, the one with the largest
// bits) and -0 is below +0. Every member gets the same bits.
func Reduce[T Elem](t *Team, op Op, dst, src Sym[T]) error {
	const name = "Reduce"
	p, err := teamPE(t, name)
	if err != nil {
		return err
	}
	if t0, ok := p.c.CollStart(); ok {
		defer p.c.CollDone(core.CollReduce, t0)
	}
	n, size := src.n, int(elemSize[T]())
	c := argCheck{p: p, op: name}
	f, kerr := combiner[T](op)
	if kerr != nil {
		c.fail("%v", kerr)
	}
	srcOff := c.off(src.check(p, name, errs.NoPE, 0, n))
	dstOff := c.off(dst.check(p, name, errs.NoPE, 0, n))
	if srcOff != dstOff && overlap(srcOff, n*size, dstOff, n*size) {
		c.fail("source and destination overlap without being the same")
	}
	a := coll.Args{Kind: coll.KindReduce, Type: typeCode[T](), Elem: size, Count: n, Op: int(op), DstOff: dst.off, DstLen: dst.n, Err: c.err}
	return t.t.Reduce(a, dstOff, srcOff, n*size, f)
}

type kernelError string

func (e kernelError) Error() string { return string(e) }

// combiner returns the kernel that folds a byte view of T elements into
// another with op (see reduce_kernel.go). Each kernel is one loop over
// typed slices, no call per element, and a zero-size value: it becomes a
// coll.Kernel without allocating.
func combiner[T Elem](op Op) (coll.Kernel, error) {
	switch any(*new(T)).(type) {
	case Float16:
		return halfKernel[f16](op)
	case BFloat16:
		return halfKernel[bf16](op)
	}
	kind := reflect.TypeFor[T]().Kind()
	isFloat := kind == reflect.Float32 || kind == reflect.Float64
	switch op {
	case OpSum:
		return sumK[T]{}, nil
	case OpProd:
		return prodK[T]{}, nil
	case OpMin, OpMax:
		switch {
		case isFloat && elemSize[T]() == 4:
			return floatMinMax[float32](op), nil
		case isFloat:
			return floatMinMax[float64](op), nil
		case op == OpMin:
			return minK[T]{}, nil
		}
		return maxK[T]{}, nil
	case OpAnd, OpOr, OpXor:
		if isFloat {
			return nil, kernelError("bitwise reduction of a floating-point type")
		}
		switch elemSize[T]() {
		case 1:
			return bitKernel[uint8](op), nil
		case 2:
			return bitKernel[uint16](op), nil
		case 4:
			return bitKernel[uint32](op), nil
		default:
			return bitKernel[uint64](op), nil
		}
	}
	return nil, kernelError("unknown reduction operator")
}

// floatMinMax returns the kernel of OpMin or OpMax over F.
func floatMinMax[F float32 | float64](op Op) coll.Kernel {
	if op == OpMin {
		return floatMinMaxK[F, pickMin[F]]{}
	}
	return floatMinMaxK[F, pickMax[F]]{}
}

// bitKernel returns the kernel of the bitwise op over U.
func bitKernel[U unsigned](op Op) coll.Kernel {
	switch op {
	case OpAnd:
		return andK[U]{}
	case OpOr:
		return orK[U]{}
	}
	return xorK[U]{}
}

// halfKernel returns the kernel of op over the 16-bit float that C
// converts.
func halfKernel[C halfCodec](op Op) (coll.Kernel, error) {
	switch op {
	case OpSum:
		return halfSumK[C]{}, nil
	case OpProd:
		return halfProdK[C]{}, nil
	case OpMin:
		return halfMinMaxK[C, pickMin[float32]]{}, nil
	case OpMax:
		return halfMinMaxK[C, pickMax[float32]]{}, nil
	case OpAnd, OpOr, OpXor:
		return nil, kernelError("bitwise reduction of a floating-point type")
	}
	return nil, kernelError("unknown reduction operator")
}
