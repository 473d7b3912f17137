package shmem

import (
	"unsafe"

	"github.com/goshmem/shmem/internal/core"
	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
	"github.com/goshmem/shmem/transport/udma"
)

// Sym is a symmetric array: it names the same object on every PE of a
// world. It is a small value, not a pointer into one PE's memory, so it can
// be copied, compared with == (the Syms one collective Malloc returns on
// every PE are equal) and shared between goroutines. The zero Sym names
// nothing; using it is ErrInvalidArgument.
type Sym[T Elem] struct {
	world uint64 // the world the object belongs to
	slot  uint32 // the heap table slot of the object
	gen   uint32 // the slot's generation when allocated: stale after Free
	off   uint64 // byte offset of element 0 in every PE's heap
	n     int    // number of elements
}

// Len returns the number of elements.
func (s Sym[T]) Len() int { return s.n }

// badSlot marks the result of an out-of-range Slice: off holds the bounds
// asked for and gen the length they were asked of, so that the call that
// uses it reports where it came from; its n is 0.
const badSlot = ^uint32(0)

// Slice returns the elements [i, j) of s, as Go slices do. Bounds outside
// [0, Len] give a Sym that every call rejects with ErrInvalidArgument,
// naming the bounds and the length (a slice of it stays as bad).
func (s Sym[T]) Slice(i, j int) Sym[T] {
	if s.slot == badSlot || s.world == 0 {
		return s
	}
	if i < 0 || j < i || j > s.n {
		return Sym[T]{world: s.world, slot: badSlot, off: uint64(uint32(int32(i)))<<32 | uint64(uint32(int32(j))), gen: uint32(s.n)}
	}
	s.off += uint64(i) * elemSize[T]()
	s.n = j - i
	return s
}

// Local returns the calling PE's own part of s, backed by its heap: reads
// and writes are plain memory accesses. It returns nil for a Sym that is not
// live in p's world.
//
// The slice is not checked on use, so it is valid only while s is live and
// the PE runs: after Free or Realloc of s it aliases whatever is allocated
// there next, and Finalize (in the simulator, also the end of sim.Run)
// releases the heap: touching the slice afterwards reads zeros and loses
// writes for a few seconds (internal/retire), then crashes the process
// with a fault that recover does not catch. Keep it no longer than s.
func (s Sym[T]) Local(p *PE) []T {
	if _, err := s.checkLocal(p, "Local", 0, s.n); err != nil || s.n == 0 {
		return nil
	}
	return asElems[T](p.c.Local()[s.off:], s.n)
}

// check validates an access of count elements of s starting at element
// first, on behalf of op addressed to PE target, and returns the byte
// offset of element first. It allocates nothing unless it fails.
//
// The accepting case is every check at once, small enough to inline into
// the operation; a refused access goes to refuse, which names the reason.
// (A Slice out of range has n 0 and a slot past every table, so Live
// refuses it.)
func (s Sym[T]) check(p *PE, op string, target, first, count int) (uint64, error) {
	if !p.zero() && s.fits(p, first, count) {
		return s.off + uint64(first)*elemSize[T](), nil
	}
	return 0, s.refuse(p, op, target, first, count)
}

// fits is every check of an access at once: s is live in p's world (p is
// usable) and elements [first, first+count) lie inside it.
func (s Sym[T]) fits(p *PE, first, count int) bool {
	return s.world == p.c.WorldID() && uint(first) <= uint(s.n) && uint(count) <= uint(s.n-first) && p.c.Heap().Live(s.slot, s.gen)
}

// refuse returns why check refused an access.
func (s Sym[T]) refuse(p *PE, op string, target, first, count int) error {
	if p.zero() {
		return zeroPE(op)
	}
	if s.world != p.c.WorldID() {
		if s.world == 0 {
			return errs.New(op, p.MyPE(), target, errs.ErrInvalidArgument, "zero or invalid Sym")
		}
		return errs.New(op, p.MyPE(), target, errs.ErrInvalidArgument, "Sym belongs to another world")
	}
	if s.slot == badSlot {
		return errs.New(op, p.MyPE(), target, errs.ErrInvalidArgument, "the Sym is Slice(%d, %d) of a symmetric object of %d elements: out of range",
			int32(s.off>>32), int32(uint32(s.off)), s.gen)
	}
	if count < 0 || first < 0 || first > s.n || count > s.n-first {
		return errs.New(op, p.MyPE(), target, errs.ErrInvalidArgument,
			"elements [%d, %d+%d) outside a symmetric object of %d", first, first, count, s.n)
	}
	if s.slot == staticsSlot {
		return errs.New(op, p.MyPE(), target, errs.ErrInvalidArgument,
			"the statics region (PE.Statics) is reached only by operations on a PE (puts, gets, atomics, signals, locks)")
	}
	if _, ok := p.c.Heap().Lookup(s.slot, s.gen); !ok {
		return errs.New(op, p.MyPE(), target, errs.ErrInvalidArgument, "Sym was freed")
	}
	return errs.New(op, p.MyPE(), target, errs.ErrInvalidArgument, "refused") // check and refuse disagree: a bug
}

// checkLocal is check for calls that touch only the caller's own heap, which
// Finalize may have unmapped: they do not go through p.Path, which checks.
func (s Sym[T]) checkLocal(p *PE, op string, first, count int) (uint64, error) {
	if p.zero() {
		return 0, zeroPE(op)
	}
	if err := p.c.Check(op); err != nil {
		return 0, err
	}
	return s.check(p, op, p.MyPE(), first, count)
}

// target validates s for count elements from first and returns the path to
// pe and the byte offset.
//
// Its common case (a live PE whose world is untroubled, an object in range)
// makes no call: core.FastPath and check's conditions inline here, so the
// operation reads the PE's state word, the Sym's table entry and the path,
// and nothing it does not own is written. Anything else goes the checked way.
func (s Sym[T]) target(p *PE, op string, pe, first, count int) (transport.Path, uint64, error) {
	if !p.zero() {
		if path := p.c.FastPath(pe); path != nil && s.fits(p, first, count) {
			return path, s.off + uint64(first)*elemSize[T](), nil
		}
	}
	return s.checkedTarget(p, op, pe, first, count)
}

// fast begins an operation's mapped fast path,
//
//	if m := p.fast(count, s.n).Mapped(pe, s.world, s.slot, s.gen); m != nil {
//
// which is target's common case for elements [0, count) of s on a peer
// whose heap is mapped here: the path as its concrete type, reached with
// no call (both inline), so the operation needs neither the interface
// call nor the op name, offsets and errors that target passes around. It
// is the runtime PE, or nil (which Mapped answers with nil) when p is nil
// or count exceeds n. On nil the operation goes through target, which
// checks every state in order and names any refusal. The element offset
// of a mapped operation is s.off.
//
// It names *udma.Path so that this package imports udma: the compiler
// inlines a function of another package only from the export data of a
// package the caller imports itself, and the word operations of the path
// (Write64, Ring, ...) must inline here.
func (p *PE) fast(count, n int) *core.PE {
	if p == nil || uint(count) > uint(n) {
		return nil
	}
	return p.c
}

// mappedPath is the type core.PE.Mapped returns (see fast).
type mappedPath = *udma.Path

// checkedTarget is target's every check in order, each failure named.
func (s Sym[T]) checkedTarget(p *PE, op string, pe, first, count int) (transport.Path, uint64, error) {
	if p.zero() {
		return nil, 0, zeroPE(op)
	}
	if s.slot == staticsSlot {
		return s.staticsTarget(p, op, pe, first, count)
	}
	path, err := p.c.Path(op, pe)
	if err != nil {
		return nil, 0, err
	}
	off, err := s.check(p, op, pe, first, count)
	return path, off, err
}

func elemSize[T Elem]() uint64 {
	var v T
	return uint64(unsafe.Sizeof(v))
}

// asBytes views a slice of elements as bytes without copying.
func asBytes[T Elem](v []T) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), len(v)*int(elemSize[T]()))
}

// asElems views n elements at the start of b, which is long enough and
// aligned (heap objects are), as a slice of T.
func asElems[T Elem](b []byte, n int) []T {
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)
}

// toBits returns the bits of a 4- or 8-byte element, zero-extended.
func toBits[T Elem](v T) uint64 {
	if elemSize[T]() == 4 {
		return uint64(*(*uint32)(unsafe.Pointer(&v)))
	}
	return *(*uint64)(unsafe.Pointer(&v))
}

// fromBits is the inverse of toBits.
func fromBits[T Elem](b uint64) T {
	if elemSize[T]() == 4 {
		u := uint32(b)
		return *(*T)(unsafe.Pointer(&u))
	}
	return *(*T)(unsafe.Pointer(&b))
}
