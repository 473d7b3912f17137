// Package heap is the heap actor: the one owner of a PE's symmetric heap
// allocator. The allocator hands out the same offsets on every PE for the
// same sequence of collective calls; the table of live objects is what the
// hot path checks symmetric addresses against, lock-free. Actor runs the
// collective allocation agreement (every PE must ask for the same thing)
// as a pure step function and is the only code that changes either. The
// memory region a heap lives in (Region) is mapped here too.
package heap

import (
	"fmt"
	"sort"
)

// MinAlign is the alignment of every object: enough for any element type and
// for 8-byte atomics, and a cache line so that two objects never share one.
const MinAlign = 64

// allocator is a deterministic first-fit allocator over [0, size). It is a
// pure state machine: the same calls in the same order give the same offsets,
// which is what makes the heap symmetric.
type allocator struct {
	size int64
	used []span // sorted by off, non-overlapping
}

type span struct{ off, size int64 }

func newAllocator(size int64) *allocator { return &allocator{size: size} }

// alloc reserves size bytes aligned to align (a power of two >= MinAlign)
// and returns the offset. Zero-size requests get a distinct MinAlign block so
// that every object has its own address.
func (a *allocator) alloc(size, align int64) (int64, error) {
	if size == 0 {
		size = MinAlign
	}
	size = roundUp(size, MinAlign)
	prevEnd := int64(0)
	for i := 0; i <= len(a.used); i++ {
		limit := a.size
		if i < len(a.used) {
			limit = a.used[i].off
		}
		off := roundUp(prevEnd, align)
		if off <= limit && limit-off >= size {
			a.used = append(a.used, span{})
			copy(a.used[i+1:], a.used[i:])
			a.used[i] = span{off, size}
			return off, nil
		}
		if i < len(a.used) {
			prevEnd = a.used[i].off + a.used[i].size
		}
	}
	return 0, fmt.Errorf("need %d bytes aligned to %d, %d of %d bytes free in the largest hole %d",
		size, align, a.free(), a.size, a.largestHole())
}

// release frees the block at off; it reports false when no block starts there.
func (a *allocator) release(off int64) bool {
	i := a.find(off)
	if i < 0 {
		return false
	}
	a.used = append(a.used[:i], a.used[i+1:]...)
	return true
}

// resize grows or shrinks the block at off in place when the space after it
// allows, reporting whether it did.
func (a *allocator) resize(off, size int64) bool {
	i := a.find(off)
	if i < 0 {
		return false
	}
	size = roundUp(max(size, 1), MinAlign)
	limit := a.size
	if i+1 < len(a.used) {
		limit = a.used[i+1].off
	}
	if off+size > limit {
		return false
	}
	a.used[i].size = size
	return true
}

func (a *allocator) find(off int64) int {
	i := sort.Search(len(a.used), func(i int) bool { return a.used[i].off >= off })
	if i < len(a.used) && a.used[i].off == off {
		return i
	}
	return -1
}

func (a *allocator) free() int64 {
	f := a.size
	for _, s := range a.used {
		f -= s.size
	}
	return f
}

func (a *allocator) largestHole() int64 {
	best, prev := int64(0), int64(0)
	for _, s := range a.used {
		best = max(best, s.off-prev)
		prev = s.off + s.size
	}
	return max(best, a.size-prev)
}

func roundUp(v, a int64) int64 { return (v + a - 1) &^ (a - 1) }

// fits reports whether alloc(size, align) would succeed in a heap of
// bound bytes (>= the current size), without changing anything.
func (a *allocator) fits(size, align, bound int64) bool {
	if size == 0 {
		size = MinAlign
	}
	size = roundUp(size, MinAlign)
	prevEnd := int64(0)
	for i := 0; i <= len(a.used); i++ {
		limit := bound
		if i < len(a.used) {
			limit = a.used[i].off
		}
		if off := roundUp(prevEnd, align); off <= limit && limit-off >= size {
			return true
		}
		if i < len(a.used) {
			prevEnd = a.used[i].off + a.used[i].size
		}
	}
	return false
}

// canResize reports whether resize(off, size) would succeed, without
// changing anything.
func (a *allocator) canResize(off, size int64) bool {
	i := a.find(off)
	if i < 0 {
		return false
	}
	limit := a.size
	if i+1 < len(a.used) {
		limit = a.used[i+1].off
	}
	return off+roundUp(max(size, 1), MinAlign) <= limit
}
