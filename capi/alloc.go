package main

import (
	"math"
	"sort"
)

// allocator hands out the C heap: byte ranges of the one Sym[uint8] that
// shmem_init allocates. shmem_malloc and its kin are collective, so every
// PE runs the same calls in the same order and this deterministic
// first-fit gives every PE the same offsets: that is what makes an address
// symmetric.
type allocator struct {
	base uint64            // the heap's address here: alignment is of addresses, not offsets
	free []span            // free ranges, sorted by offset, never adjacent
	used map[uint64]uint64 // offset -> size of each live block
}

type span struct{ off, size uint64 }

func newAllocator(base, start, end uint64) *allocator {
	return &allocator{base: base, free: []span{{start, end - start}}, used: map[uint64]uint64{}}
}

// alloc returns the offset of size bytes aligned to align (a power of two).
func (a *allocator) alloc(size, align uint64) (uint64, bool) {
	if size == 0 {
		size = 1
	}
	if size > math.MaxUint64-15 {
		return 0, false // rounding up would wrap to a small block
	}
	size = (size + 15) &^ 15 // keep every block 16-byte aligned, as malloc does
	for i, s := range a.free {
		off := ((a.base+s.off+align-1)&^(align-1) - a.base)
		if off < s.off || off-s.off > s.size || s.size-(off-s.off) < size {
			continue
		}
		a.free = append(a.free[:i], a.free[i+1:]...)
		if off > s.off {
			a.insert(span{s.off, off - s.off})
		}
		if end, send := off+size, s.off+s.size; end < send {
			a.insert(span{end, send - end})
		}
		a.used[off] = size
		return off, true
	}
	return 0, false
}

// release frees the block at off; false if none starts there.
func (a *allocator) release(off uint64) bool {
	size, ok := a.used[off]
	if !ok {
		return false
	}
	delete(a.used, off)
	a.insert(span{off, size})
	return true
}

// sizeOf returns the size of the live block at off.
func (a *allocator) sizeOf(off uint64) (uint64, bool) {
	s, ok := a.used[off]
	return s, ok
}

// insert adds a free span, merging it with its neighbours.
func (a *allocator) insert(s span) {
	i := sort.Search(len(a.free), func(i int) bool { return a.free[i].off > s.off })
	a.free = append(a.free, span{})
	copy(a.free[i+1:], a.free[i:])
	a.free[i] = s
	if i+1 < len(a.free) && a.free[i].off+a.free[i].size == a.free[i+1].off {
		a.free[i].size += a.free[i+1].size
		a.free = append(a.free[:i+1], a.free[i+2:]...)
	}
	if i > 0 && a.free[i-1].off+a.free[i-1].size == a.free[i].off {
		a.free[i-1].size += a.free[i].size
		a.free = append(a.free[:i], a.free[i+1:]...)
	}
}
