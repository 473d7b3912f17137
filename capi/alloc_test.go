package main

import (
	"math"
	"testing"
)

func TestAllocatorReuseAndAlign(t *testing.T) {
	a := newAllocator(4096, 0, 1<<20)
	x, _ := a.alloc(100, 16)
	y, _ := a.alloc(100, 4096)
	if y%4096 != 0 || y == x {
		t.Fatalf("x=%d y=%d", x, y)
	}
	if !a.release(x) || a.release(x) {
		t.Fatal("release")
	}
	z, _ := a.alloc(50, 16)
	if z != x {
		t.Fatalf("first fit: got %d, want %d", z, x)
	}
	a.release(y)
	a.release(z)
	if len(a.free) != 1 || a.free[0].size != 1<<20 {
		t.Fatalf("not merged: %v", a.free)
	}
	if _, ok := a.alloc(2<<20, 16); ok {
		t.Fatal("allocated more than the heap")
	}
}

// TestAllocatorRefusesSizesThatWrap: a size within 15 of the largest
// size_t must fail, not round up to a small block that overlaps the next
// allocation (shmem_malloc(SIZE_MAX-8) returned the address the next
// shmem_malloc(64) got).
func TestAllocatorRefusesSizesThatWrap(t *testing.T) {
	a := newAllocator(4096, 0, 1<<20)
	for _, size := range []uint64{math.MaxUint64, math.MaxUint64 - 8, math.MaxUint64 - 15} {
		if off, ok := a.alloc(size, 16); ok {
			t.Fatalf("alloc(%d) = %d, want a refusal", size, off)
		}
	}
	if x, ok := a.alloc(64, 16); !ok || x != 0 {
		t.Fatalf("alloc(64) after the refusals = %d, %v; want 0, true", x, ok)
	}
}
