package shmem

import (
	"github.com/goshmem/shmem/heap"
	"github.com/goshmem/shmem/internal/errs"
)

// Malloc allocates n elements of T on every PE (shmem_malloc). It is
// collective: every PE calls it with the same n in the same order, and it
// returns the same Sym on every PE. Memory is not zeroed; see Calloc.
func Malloc[T Elem](p *PE, n int) (Sym[T], error) {
	return allocate[T](p, "Malloc", n, heap.MinAlign)
}

// Calloc is Malloc with the memory zeroed on every PE before any PE returns.
func Calloc[T Elem](p *PE, n int) (Sym[T], error) {
	s, err := allocate[T](p, "Calloc", n, heap.MinAlign)
	if err != nil {
		return s, err
	}
	clear(s.Local(p))
	// No PE may put into the object before every PE has zeroed its part.
	return s, p.syncAllAs("Calloc")
}

// Align is Malloc with the object aligned to alignment bytes, a power of
// two (shmem_align).
func Align[T Elem](p *PE, alignment, n int) (Sym[T], error) {
	if alignment <= 0 || alignment&(alignment-1) != 0 {
		return Sym[T]{}, refuse(p, "Align", errs.New("Align", p.MyPE(), errs.NoPE, errs.ErrInvalidArgument, "alignment %d is not a power of two", alignment))
	}
	return allocate[T](p, "Align", n, int64(max(alignment, heap.MinAlign)))
}

func allocate[T Elem](p *PE, op string, n int, align int64) (Sym[T], error) {
	if p.zero() {
		return Sym[T]{}, zeroPE(op)
	}
	if n < 0 {
		return Sym[T]{}, refuse(p, op, errs.New(op, p.MyPE(), errs.NoPE, errs.ErrInvalidArgument, "negative count %d", n))
	}
	size := int64(n) * int64(elemSize[T]())
	if size/int64(elemSize[T]()) != int64(n) || size > p.c.Heap().Limit() {
		return Sym[T]{}, refuse(p, op, errs.New(op, p.MyPE(), errs.NoPE, errs.ErrOutOfMemory, "%d elements of %d bytes exceed the %d-byte heap limit", n, elemSize[T](), p.c.Heap().Limit()))
	}
	res, err := p.c.HeapOp(op, heap.Request{Kind: heap.KindAlloc, Size: size, Align: align})
	if err != nil {
		return Sym[T]{}, err
	}
	return Sym[T]{world: p.c.WorldID(), slot: res.Slot, gen: res.Gen, off: uint64(res.Off), n: n}, nil
}

// Realloc resizes s to n elements on every PE, keeping the contents up to
// the smaller size (shmem_realloc). The returned Sym replaces s, which must
// not be used again: calls with s fail with ErrInvalidArgument ("Sym was
// freed") whether or not the object moved. Collective. The zero Sym is
// C's null pointer here: Realloc of it is Malloc of n, as the spec says,
// so a buffer that starts as the zero Sym can grow by Realloc alone; and
// Realloc of an object to 0 elements frees it and returns the zero Sym,
// as shmem_realloc(ptr, 0) frees ptr and returns the null pointer.
func Realloc[T Elem](p *PE, s Sym[T], n int) (Sym[T], error) {
	const op = "Realloc"
	if s == (Sym[T]{}) {
		return allocate[T](p, op, n, heap.MinAlign)
	}
	if _, err := s.check(p, op, errs.NoPE, 0, 0); err != nil {
		return Sym[T]{}, refuse(p, op, err)
	}
	if s.off != objectStart(p, s) {
		return Sym[T]{}, refuse(p, op, errs.New(op, p.MyPE(), errs.NoPE, errs.ErrInvalidArgument, "Sym is a slice, not a whole object"))
	}
	if n < 0 {
		return Sym[T]{}, refuse(p, op, errs.New(op, p.MyPE(), errs.NoPE, errs.ErrInvalidArgument, "negative count %d", n))
	}
	if n == 0 {
		_, err := p.c.HeapOp(op, heap.Request{Kind: heap.KindFree, Slot: s.slot, Gen: s.gen})
		return Sym[T]{}, err
	}
	size := int64(n) * int64(elemSize[T]())
	if size/int64(elemSize[T]()) != int64(n) || size > p.c.Heap().Limit() {
		return Sym[T]{}, refuse(p, op, errs.New(op, p.MyPE(), errs.NoPE, errs.ErrOutOfMemory, "%d elements exceed the %d-byte heap limit", n, p.c.Heap().Limit()))
	}
	res, err := p.c.HeapOp(op, heap.Request{Kind: heap.KindRealloc, Size: size, Slot: s.slot, Gen: s.gen})
	if err != nil {
		return Sym[T]{}, err
	}
	// Each PE copies its contents when the object moves; no PE may put
	// into the new object before every PE has done so.
	return Sym[T]{world: p.c.WorldID(), slot: res.Slot, gen: res.Gen, off: uint64(res.Off), n: n}, p.syncAllAs(op)
}

// Free releases s on every PE (shmem_free). Collective; it completes the
// caller's outstanding puts first. Free of the zero Sym frees nothing, as
// shmem_free(NULL) does, but is still a collective call: every PE must
// make it, with the zero Sym too (one that frees an object while another
// frees nothing fails on both).
func Free[T Elem](p *PE, s Sym[T]) error {
	const op = "Free"
	if s == (Sym[T]{}) && !p.zero() {
		_, err := p.c.HeapOp(op, heap.Request{Kind: heap.KindFree})
		return err
	}
	if _, err := s.check(p, op, errs.NoPE, 0, 0); err != nil {
		return refuse(p, op, err)
	}
	if s.off != objectStart(p, s) {
		return refuse(p, op, errs.New(op, p.MyPE(), errs.NoPE, errs.ErrInvalidArgument, "Sym is a slice, not a whole object"))
	}
	_, err := p.c.HeapOp(op, heap.Request{Kind: heap.KindFree, Slot: s.slot, Gen: s.gen})
	return err
}

// refuse joins the agreement of a collective heap call whose arguments this
// PE rejected, so that the other PEs fail too instead of waiting for it and
// the collective order stays the same everywhere; it returns err.
func refuse(p *PE, op string, err error) error {
	if p.zero() {
		return zeroPE(op)
	}
	_, _ = p.c.HeapOp(op, heap.Request{})
	return err
}

func objectStart[T Elem](p *PE, s Sym[T]) uint64 {
	o, _ := p.c.Heap().Lookup(s.slot, s.gen)
	return uint64(o.Off)
}

// Ptr returns a load/store view of pe's part of s when pe's memory is
// mapped into this process (shmem_ptr), and false otherwise. The view is
// valid as long as a slice from Sym.Local is: touching it after Free of s,
// or after Finalize, reads or writes memory goshmem no longer owns or
// crashes the process.
func Ptr[T Elem](p *PE, s Sym[T], pe int) ([]T, bool) {
	path, off, err := s.target(p, "Ptr", pe, 0, s.n)
	if err != nil {
		return nil, false
	}
	b := path.Ptr(off, s.n*int(elemSize[T]()))
	if b == nil {
		return nil, false
	}
	return asElems[T](b, s.n), true
}

// TeamPtr is Ptr with pe numbered in team t (shmem_team_ptr, from
// OpenSHMEM 1.6): false also when t is nil or destroyed, or pe is not one
// of its members.
func TeamPtr[T Elem](t *Team, s Sym[T], pe int) ([]T, bool) {
	if t.invalid() {
		return nil, false
	}
	w := t.TranslatePE(pe, t.p.TeamWorld())
	if w < 0 {
		return nil, false
	}
	return Ptr(t.p, s, w)
}
