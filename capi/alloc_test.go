package main

import "testing"

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
