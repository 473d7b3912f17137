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
// and floats give ErrInvalidArgument. Every member gets the same bits.
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
// another with op. Each kernel is one loop over typed slices: no call per
// element.
func combiner[T Elem](op Op) (coll.Combine, error) {
	switch any(*new(T)).(type) {
	case Float16:
		return halfKernel(op, func(u uint16) float32 { return Float16(u).Float32() }, func(f float32) uint16 { return uint16(NewFloat16(f)) })
	case BFloat16:
		return halfKernel(op, func(u uint16) float32 { return BFloat16(u).Float32() }, func(f float32) uint16 { return uint16(NewBFloat16(f)) })
	}
	kind := reflect.TypeFor[T]().Kind()
	isFloat := kind == reflect.Float32 || kind == reflect.Float64
	switch op {
	case OpSum:
		return sumK[T], nil
	case OpProd:
		return prodK[T], nil
	case OpMin:
		return minK[T], nil
	case OpMax:
		return maxK[T], nil
	case OpAnd, OpOr, OpXor:
		if isFloat {
			return nil, kernelError("bitwise reduction of a floating-point type")
		}
		switch elemSize[T]() {
		case 1:
			return bitK[uint8](op), nil
		case 2:
			return bitK[uint16](op), nil
		case 4:
			return bitK[uint32](op), nil
		default:
			return bitK[uint64](op), nil
		}
	}
	return nil, kernelError("unknown reduction operator")
}

func views[T Elem](d, s []byte) ([]T, []T) {
	n := len(d) / int(elemSize[T]())
	return asElems[T](d, n), asElems[T](s, n)
}

func sumK[T Elem](d, s []byte) {
	dd, ss := views[T](d, s)
	for i := range dd {
		dd[i] += ss[i]
	}
}

func prodK[T Elem](d, s []byte) {
	dd, ss := views[T](d, s)
	for i := range dd {
		dd[i] *= ss[i]
	}
}

func minK[T Elem](d, s []byte) {
	dd, ss := views[T](d, s)
	for i := range dd {
		if ss[i] < dd[i] {
			dd[i] = ss[i]
		}
	}
}

func maxK[T Elem](d, s []byte) {
	dd, ss := views[T](d, s)
	for i := range dd {
		if ss[i] > dd[i] {
			dd[i] = ss[i]
		}
	}
}

type unsigned interface {
	~uint8 | ~uint16 | ~uint32 | ~uint64
}

func bitK[U unsigned](op Op) coll.Combine {
	return func(d, s []byte) {
		n := len(d) / int(elemSize[U]())
		dd, ss := asElems[U](d, n), asElems[U](s, n)
		switch op {
		case OpAnd:
			for i := range dd {
				dd[i] &= ss[i]
			}
		case OpOr:
			for i := range dd {
				dd[i] |= ss[i]
			}
		default:
			for i := range dd {
				dd[i] ^= ss[i]
			}
		}
	}
}

// halfKernel computes a 16-bit float reduction in float32, rounding back
// after each operation as a half-precision unit would.
func halfKernel(op Op, load func(uint16) float32, store func(float32) uint16) (coll.Combine, error) {
	var f func(a, b float32) float32
	switch op {
	case OpSum:
		f = func(a, b float32) float32 { return a + b }
	case OpProd:
		f = func(a, b float32) float32 { return a * b }
	case OpMin:
		f = func(a, b float32) float32 { return min(a, b) }
	case OpMax:
		f = func(a, b float32) float32 { return max(a, b) }
	case OpAnd, OpOr, OpXor:
		return nil, kernelError("bitwise reduction of a floating-point type")
	default:
		return nil, kernelError("unknown reduction operator")
	}
	return func(d, s []byte) {
		dd, ss := views[uint16](d, s)
		for i := range dd {
			dd[i] = store(f(load(dd[i]), load(ss[i])))
		}
	}, nil
}
