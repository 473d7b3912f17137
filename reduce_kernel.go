package shmem

import "unsafe"

// The reduction kernels: each is a zero-size type whose Combine folds a
// byte view of elements into another (dst = dst op src) in one loop over
// typed slices. Zero-size values become a coll.Kernel without allocating;
// the generic functions they replace were closures over their
// dictionaries, one allocation per Reduce per PE (issue 17).

func views[T Elem](d, s []byte) ([]T, []T) {
	n := len(d) / int(elemSize[T]())
	return asElems[T](d, n), asElems[T](s, n)
}

type sumK[T Elem] struct{}

func (sumK[T]) Combine(d, s []byte) {
	dd, ss := views[T](d, s)
	for i := range dd {
		dd[i] += ss[i]
	}
}

type prodK[T Elem] struct{}

func (prodK[T]) Combine(d, s []byte) {
	dd, ss := views[T](d, s)
	for i := range dd {
		dd[i] *= ss[i]
	}
}

// The integer kernels of OpMin and OpMax. Floats take floatMinMaxK.

type minK[T Elem] struct{}

func (minK[T]) Combine(d, s []byte) {
	dd, ss := views[T](d, s)
	for i := range dd {
		if ss[i] < dd[i] {
			dd[i] = ss[i]
		}
	}
}

type maxK[T Elem] struct{}

func (maxK[T]) Combine(d, s []byte) {
	dd, ss := views[T](d, s)
	for i := range dd {
		if ss[i] > dd[i] {
			dd[i] = ss[i]
		}
	}
}

// The float kernels of OpMin and OpMax must be commutative to the bit:
// members combine the same values in different orders (a with b on one
// PE, b with a on another), and Reduce promises every member the same
// bits. A comparison keeps one operand when it cannot order them, so it
// is not: NaN < 1 and 1 < NaN are both false, and -0 < +0 is too. So, as
// Go's min and max do, any NaN gives NaN and -0 is below +0; of two NaNs
// the one with the larger bits wins, which Go's min and max leave to the
// order of their operands.

// floatPick is min or max of two floats neither of which is NaN.
type floatPick[F float32 | float64] interface{ pick(x, y F) F }

type pickMin[F float32 | float64] struct{}

func (pickMin[F]) pick(x, y F) F { return min(x, y) }

type pickMax[F float32 | float64] struct{}

func (pickMax[F]) pick(x, y F) F { return max(x, y) }

// floatMinMaxK is the float kernel of OpMin (P pickMin) or OpMax (pickMax).
type floatMinMaxK[F float32 | float64, P floatPick[F]] struct{}

func (floatMinMaxK[F, P]) Combine(d, s []byte) {
	var p P
	dd, ss := views[F](d, s)
	for i := range dd {
		x, y := dd[i], ss[i]
		if x != x || y != y {
			dd[i] = nanOf(x, y)
		} else {
			dd[i] = p.pick(x, y)
		}
	}
}

// nanOf returns the NaN among x and y, the one with the larger bits when
// both are: the same whichever comes first.
func nanOf[F float32 | float64](x, y F) F {
	if x != x && (y == y || floatBits(x) > floatBits(y)) {
		return x
	}
	return y
}

func floatBits[F float32 | float64](x F) uint64 {
	if unsafe.Sizeof(x) == 4 {
		return uint64(*(*uint32)(unsafe.Pointer(&x)))
	}
	return *(*uint64)(unsafe.Pointer(&x))
}

type unsigned interface {
	~uint8 | ~uint16 | ~uint32 | ~uint64
}

// The bitwise kernels work on the unsigned integer of the element's
// width: the bits are the same whatever the signedness.

type andK[U unsigned] struct{}

func (andK[U]) Combine(d, s []byte) {
	dd, ss := views[U](d, s)
	for i := range dd {
		dd[i] &= ss[i]
	}
}

type orK[U unsigned] struct{}

func (orK[U]) Combine(d, s []byte) {
	dd, ss := views[U](d, s)
	for i := range dd {
		dd[i] |= ss[i]
	}
}

type xorK[U unsigned] struct{}

func (xorK[U]) Combine(d, s []byte) {
	dd, ss := views[U](d, s)
	for i := range dd {
		dd[i] ^= ss[i]
	}
}

// halfCodec converts a 16-bit float (its bits) to float32 and back: the
// 16-bit kernels compute in float32 and round back after each operation,
// as a half-precision unit would.
type halfCodec interface {
	load(uint16) float32
	store(float32) uint16
}

// f16 is Float16's codec.
type f16 struct{}

func (f16) load(u uint16) float32  { return Float16(u).Float32() }
func (f16) store(f float32) uint16 { return uint16(NewFloat16(f)) }

// bf16 is BFloat16's codec.
type bf16 struct{}

func (bf16) load(u uint16) float32  { return BFloat16(u).Float32() }
func (bf16) store(f float32) uint16 { return uint16(NewBFloat16(f)) }

type halfSumK[C halfCodec] struct{}

func (halfSumK[C]) Combine(d, s []byte) {
	var c C
	dd, ss := views[uint16](d, s)
	for i := range dd {
		dd[i] = c.store(c.load(dd[i]) + c.load(ss[i]))
	}
}

type halfProdK[C halfCodec] struct{}

func (halfProdK[C]) Combine(d, s []byte) {
	var c C
	dd, ss := views[uint16](d, s)
	for i := range dd {
		dd[i] = c.store(c.load(dd[i]) * c.load(ss[i]))
	}
}

// halfMinMaxK is floatMinMaxK on 16-bit floats: any NaN gives NaN, the
// larger bits of two, so that the result is the same in either order.
type halfMinMaxK[C halfCodec, P floatPick[float32]] struct{}

func (halfMinMaxK[C, P]) Combine(d, s []byte) {
	var c C
	var p P
	dd, ss := views[uint16](d, s)
	for i := range dd {
		x, y := c.load(dd[i]), c.load(ss[i])
		if x != x || y != y {
			dd[i] = halfNaNOf(dd[i], ss[i], x, y)
		} else {
			dd[i] = c.store(p.pick(x, y))
		}
	}
}

// halfNaNOf returns the bits of the NaN among a and b (x and y as
// float32), the larger bits when both are NaN.
func halfNaNOf(a, b uint16, x, y float32) uint16 {
	if x != x && (y == y || a > b) {
		return a
	}
	return b
}

// complexSumK and complexProdK add and multiply complex numbers stored as
// their real part followed by their imaginary part (ReduceComplex).
type complexSumK[C complex64 | complex128] struct{}

func (complexSumK[C]) Combine(d, s []byte) {
	dd, ss := complexViews[C](d, s)
	for i := range dd {
		dd[i] += ss[i]
	}
}

type complexProdK[C complex64 | complex128] struct{}

func (complexProdK[C]) Combine(d, s []byte) {
	dd, ss := complexViews[C](d, s)
	for i := range dd {
		dd[i] *= ss[i]
	}
}

func complexViews[C complex64 | complex128](d, s []byte) ([]C, []C) {
	var c C
	n := len(d) / int(unsafe.Sizeof(c))
	return unsafe.Slice((*C)(unsafe.Pointer(unsafe.SliceData(d))), n), unsafe.Slice((*C)(unsafe.Pointer(unsafe.SliceData(s))), n)
}
