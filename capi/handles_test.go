package main

import (
	"slices"
	"testing"
)

// TestHandlesAddInStaysInRange: addIn hands out keys in [low, limit)
// only, reuses a freed key only after the others, and says when all are
// taken; context handles past the C table (GS_MAX_CTX) used to be handed
// out once 4094 had been made, however many were live.
func TestHandlesAddInStaysInRange(t *testing.T) {
	var h handles[int]
	h.set(1, 0) // as init sets SHMEM_CTX_DEFAULT
	var got []uintptr
	for i := range 4 {
		k, ok := h.addIn(i, 2, 6)
		if !ok {
			t.Fatalf("add %d: refused with %d of 4 keys taken", i, i)
		}
		got = append(got, k)
	}
	if want := []uintptr{2, 3, 4, 5}; !slices.Equal(got, want) {
		t.Fatalf("keys %v, want %v", got, want)
	}
	if k, ok := h.addIn(9, 2, 6); ok {
		t.Fatalf("every key taken, but got %d", k)
	}
	h.del(3)
	h.del(4)
	if k, ok := h.addIn(9, 2, 6); !ok || k != 3 {
		t.Fatalf("after freeing 3 and 4: got %d, %v, want 3", k, ok)
	}
	h.del(2)
	if k, ok := h.addIn(9, 2, 6); !ok || k != 4 {
		t.Fatalf("2 freed after 4: got %d, %v, want 4 (next in turn)", k, ok)
	}
	if k, ok := h.addIn(9, 2, 6); !ok || k != 2 {
		t.Fatalf("got %d, %v, want 2 (the last free key)", k, ok)
	}
	if v, ok := h.get(1); !ok || v != 0 {
		t.Fatalf("key 1 below the range was disturbed: %d, %v", v, ok)
	}
}
