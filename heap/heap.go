package heap

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/goshmem/shmem/internal/errs"
)

// Object is one live symmetric allocation as the table records it.
type Object struct {
	Off  int64  // byte offset in the heap
	Size int64  // bytes requested
	Gen  uint32 // changes every time the slot is reused, so stale handles fail
	Live bool
}

// table is an immutable snapshot of the objects, indexed by slot. The hot
// path reads it through an atomic pointer: no lock per put.
type table struct {
	objs []Object
	// keys is, by slot, liveKey(Gen) of a live object and 0 of a freed
	// one: what Live compares, one word instead of two fields of an
	// Object.
	keys []uint64
}

// liveKey is a live object's key in table.keys; never 0.
func liveKey(gen uint32) uint64 { return uint64(gen)<<1 | 1 }

// Heap is one PE's symmetric heap. Changes (Apply) come from a single
// goroutine, the heap actor's; lookups come from any goroutine.
//
// A heap may grow (see NewGrowable): its memory is one reservation of
// address space as large as the limit, of which the first Size bytes are
// usable; growing makes a further segment of it usable on every PE, in
// the same collective step on each. An offset is therefore an offset into
// one contiguous range whatever segment it falls in: a path addresses a
// grown segment exactly as the first one, with the same bounds check.
type Heap struct {
	mem   []byte // the whole reservation: Limit bytes, of which Size are usable
	size  atomic.Int64
	alloc *allocator
	// tab is the current *table, read and written atomically (objects,
	// publish). An unsafe.Pointer rather than an atomic.Pointer[table]:
	// the generic method costs Live enough of the inliner's budget that
	// the root package's fast path (core.PE.Mapped) would not inline.
	tab  unsafe.Pointer
	gen  uint32
	free []uint32 // slots of freed objects, reused lowest first
}

// New manages mem as a symmetric heap that does not grow. The caller keeps
// ownership of mem.
func New(mem []byte) *Heap { return NewGrowable(mem, int64(len(mem))) }

// NewGrowable manages mem as a symmetric heap whose first size bytes are
// usable now; it may grow up to len(mem), a segment at a time, as the
// actor's Grow effects say (the runtime makes the memory usable before
// the allocation that needs it is agreed). The caller keeps ownership of
// mem.
func NewGrowable(mem []byte, size int64) *Heap {
	size = min(max(size, 0), int64(len(mem)))
	h := &Heap{mem: mem, alloc: newAllocator(size)}
	h.size.Store(size)
	h.publish(&table{})
	return h
}

// Bytes returns the whole reservation (Limit bytes); only the first Size
// are usable, and every live object lies inside them.
func (h *Heap) Bytes() []byte { return h.mem }

// Size returns the usable heap size in bytes: the initial size plus every
// segment grown since.
func (h *Heap) Size() int64 { return h.size.Load() }

// Limit returns the size the heap may grow to.
func (h *Heap) Limit() int64 { return int64(len(h.mem)) }

// growTarget returns the size the heap must grow to for r to fit, or 0
// when it fits as is or cannot fit even at the limit (then the request
// fails as it would without growth). Segments double the heap, so n
// growths reach 2^n times the initial size and a put never waits on more
// than a handful of them; the last stops at the limit. Every PE computes
// the same target from the same allocator state.
func (h *Heap) growTarget(r Request) int64 {
	if r.Kind != KindAlloc && r.Kind != KindRealloc {
		return 0
	}
	align := max(r.Align, MinAlign)
	if r.Kind == KindRealloc {
		o, ok := h.Lookup(r.Slot, r.Gen)
		if !ok || h.alloc.canResize(o.Off, r.Size) {
			return 0
		}
		align = MinAlign
	}
	if r.Size < 0 || align&(align-1) != 0 || h.alloc.fits(r.Size, align, h.alloc.size) {
		return 0
	}
	limit := h.Limit()
	for target := h.alloc.size; target < limit; {
		target = min(limit, 2*max(target, MinAlign))
		if h.alloc.fits(r.Size, align, target) {
			return target
		}
	}
	return 0
}

// grow raises the usable size to size (apply's part of a growth: the
// memory is usable already).
func (h *Heap) grow(size int64) {
	if size > h.alloc.size && size <= h.Limit() {
		h.alloc.size = size
		h.size.Store(size)
	}
}

// Lookup returns the live object in slot with generation gen.
func (h *Heap) Lookup(slot, gen uint32) (Object, bool) {
	objs := h.objects()
	if int(slot) >= len(objs) {
		return Object{}, false
	}
	o := objs[slot]
	return o, o.Live && o.Gen == gen
}

// Live is Lookup's verdict alone, small enough to inline into the hot
// path's check: it compares one word of the table (keys), not the
// object's fields.
func (h *Heap) Live(slot, gen uint32) bool {
	keys := (*table)(atomic.LoadPointer(&h.tab)).keys
	return uint(slot) < uint(len(keys)) && keys[slot] == liveKey(gen)
}

// Kind is a collective heap operation.
type Kind uint8

// The heap operations; values travel in control messages.
const (
	KindAlloc Kind = iota + 1
	KindFree
	KindRealloc
)

func (k Kind) String() string {
	switch k {
	case KindAlloc:
		return "alloc"
	case KindFree:
		return "free"
	case KindRealloc:
		return "realloc"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Request is one collective heap operation. Every PE applies the same
// sequence of Requests, which is what keeps the heaps symmetric.
type Request struct {
	Kind  Kind   `msgpack:"k"`
	Size  int64  `msgpack:"s"` // bytes, for alloc and realloc
	Align int64  `msgpack:"a"` // bytes, a power of two, for alloc
	Slot  uint32 `msgpack:"o"` // the object, for free and realloc
	Gen   uint32 `msgpack:"g"`
	// Grow is the size the heap grows to before the request applies, 0
	// for none: the heap actor sets it (growTarget), so that the PEs
	// agree on the growth with the request itself.
	Grow int64 `msgpack:"gr,omitempty"`
}

// Result is what applying a Request gave.
type Result struct {
	Slot uint32
	Gen  uint32
	Off  int64
	Err  error
}

// apply performs r. Only the heap actor (Actor) calls it: it is the one
// owner of the allocator and the table.
func (h *Heap) apply(r Request) Result {
	if r.Grow > 0 {
		h.grow(r.Grow)
	}
	switch r.Kind {
	case KindAlloc:
		return h.allocate(r.Size, r.Align)
	case KindFree:
		if r.Gen == 0 {
			return Result{} // the zero Sym's (no object has generation 0): nothing to free
		}
		o, ok := h.Lookup(r.Slot, r.Gen)
		if !ok {
			return Result{Err: fmt.Errorf("object %d.%d is not allocated: %w", r.Slot, r.Gen, errs.ErrInvalidArgument)}
		}
		h.alloc.release(o.Off)
		h.setObject(r.Slot, Object{Gen: o.Gen})
		h.free = append(h.free, r.Slot)
		return Result{}
	case KindRealloc:
		return h.reallocate(r)
	}
	return Result{Err: fmt.Errorf("unknown heap operation %d: %w", r.Kind, errs.ErrInvalidArgument)}
}

func (h *Heap) allocate(size, align int64) Result {
	if size < 0 || align <= 0 || align&(align-1) != 0 {
		return Result{Err: fmt.Errorf("size %d, alignment %d: %w", size, align, errs.ErrInvalidArgument)}
	}
	off, err := h.alloc.alloc(size, max(align, MinAlign))
	if err != nil {
		return Result{Err: fmt.Errorf("%v: %w", err, errs.ErrOutOfMemory)}
	}
	h.gen++
	slot := h.takeSlot()
	h.setObject(slot, Object{Off: off, Size: size, Gen: h.gen, Live: true})
	return Result{Slot: slot, Gen: h.gen, Off: off}
}

func (h *Heap) reallocate(r Request) Result {
	o, ok := h.Lookup(r.Slot, r.Gen)
	if !ok {
		return Result{Err: fmt.Errorf("object %d.%d is not allocated: %w", r.Slot, r.Gen, errs.ErrInvalidArgument)}
	}
	if r.Size < 0 {
		return Result{Err: fmt.Errorf("size %d: %w", r.Size, errs.ErrInvalidArgument)}
	}
	if h.alloc.resize(o.Off, r.Size) {
		// A new generation even in place: the old handle must fail as it
		// does when the object moves (Realloc's contract), not reach, or
		// Free, the resized object.
		h.gen++
		o.Size, o.Gen = r.Size, h.gen
		h.setObject(r.Slot, o)
		return Result{Slot: r.Slot, Gen: o.Gen, Off: o.Off}
	}
	res := h.allocate(r.Size, MinAlign)
	if res.Err != nil {
		return res
	}
	copy(h.mem[res.Off:res.Off+min(o.Size, r.Size)], h.mem[o.Off:o.Off+o.Size])
	h.alloc.release(o.Off)
	h.setObject(r.Slot, Object{Gen: o.Gen})
	h.free = append(h.free, r.Slot)
	return res
}

func (h *Heap) takeSlot() uint32 {
	if n := len(h.free); n > 0 {
		best := 0
		for i, s := range h.free {
			if s < h.free[best] {
				best = i
			}
		}
		s := h.free[best]
		h.free = append(h.free[:best], h.free[best+1:]...)
		return s
	}
	return uint32(len(h.objects()))
}

// setObject publishes a new snapshot with slot set to o. Copying the table
// on every change keeps lookups lock-free; changes are collective calls,
// rare next to puts.
func (h *Heap) setObject(slot uint32, o Object) {
	old := h.objects()
	n := max(len(old), int(slot)+1)
	objs := make([]Object, n)
	copy(objs, old)
	objs[slot] = o
	keys := make([]uint64, n)
	for i, o := range objs {
		if o.Live {
			keys[i] = liveKey(o.Gen)
		}
	}
	h.publish(&table{objs: objs, keys: keys})
}

// objects returns the current table's objects.
func (h *Heap) objects() []Object { return (*table)(atomic.LoadPointer(&h.tab)).objs }

// publish makes t the current table.
func (h *Heap) publish(t *table) { atomic.StorePointer(&h.tab, unsafe.Pointer(t)) }
