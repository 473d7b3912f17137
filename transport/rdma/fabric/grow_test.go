//go:build cgo && goshmem_fabric

package fabric

import (
	"bytes"
	"errors"
	"syscall"
	"testing"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
)

// reserve returns limit bytes of address space of which the first usable
// are mapped read/write, as a growable heap.Region or udma segment is.
func reserve(t *testing.T, usable, limit int) []byte {
	t.Helper()
	b, err := syscall.Mmap(-1, 0, limit, syscall.PROT_NONE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Munmap(b) })
	mapRW(t, b, usable)
	return b[:usable]
}

func mapRW(t *testing.T, b []byte, size int) {
	t.Helper()
	if err := syscall.Mprotect(b[:size:size], syscall.PROT_READ|syscall.PROT_WRITE); err != nil {
		t.Fatal(err)
	}
}

// A grown heap is reached from every node once each registered its growth
// and the others took its new Address: puts of every size class, gets and
// atomics land in the grown part, where they were refused before.
func TestGrowHeap(t *testing.T) {
	const initial, limit = 16 << 10, 256 << 10
	heaps := make([][]byte, 3)
	w := newWorld(t, 3, 0, func(c *Config) { heaps[c.Rank] = reserve(t, initial, limit); c.Heap = heaps[c.Rank] })
	far := uint64(200 << 10)
	if err := w.path(t, 0, 1).Put(far, []byte{1}); !isInvalid(err) {
		t.Fatalf("put past the registered heap: %v, want ErrInvalidArgument", err)
	}
	addrs := make([][]byte, 3)
	for r, n := range w.nodes {
		mapRW(t, heaps[r][:limit], limit)
		if err := n.GrowHeap(limit); err != nil {
			t.Fatal(err)
		}
		if err := n.GrowHeap(initial); err != nil { // smaller: nothing to do
			t.Fatal(err)
		}
		if n.HeapSize() != limit {
			t.Fatalf("node %d registers %d bytes, want %d", r, n.HeapSize(), limit)
		}
		a, err := DecodeAddress(n.Address())
		if err != nil || a.HeapSize != limit {
			t.Fatalf("node %d address after growth: %+v, %v", r, a, err)
		}
		addrs[r] = n.Address()
	}
	for _, n := range w.nodes {
		if err := n.UpdatePeers(addrs); err != nil {
			t.Fatal(err)
		}
	}
	big := pattern(40<<10, 3) // past BounceSize: pinned and sent directly
	for from := 0; from < 3; from++ {
		for to := 0; to < 3; to++ {
			p := w.path(t, from, to)
			base := far + uint64(from)*1024
			if err := p.Put(base, []byte{byte(10*from + to)}); err != nil { // inject
				t.Fatal(err)
			}
			if err := p.Put(base+64, pattern(900, byte(from))); err != nil { // bounce
				t.Fatal(err)
			}
			if _, err := p.Atomic(transport.AtomicFetchAdd, 8, 160<<10, uint64(from+1), 0); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.path(t, from, (from+1)%3).Put(uint64(16<<10+from*(40<<10)), big); err != nil {
			t.Fatal(err)
		}
		if err := w.nodes[from].Engine().Quiet(); err != nil {
			t.Fatal(err)
		}
	}
	for to := 0; to < 3; to++ {
		for from := 0; from < 3; from++ {
			base := far + uint64(from)*1024
			if got := heaps[to][:limit][base]; got != byte(10*from+to) {
				t.Fatalf("PE %d byte from %d = %d", to, from, got)
			}
			got := make([]byte, 900)
			if err := w.path(t, (to+1)%3, to).Get(got, base+64); err != nil || !bytes.Equal(got, pattern(900, byte(from))) {
				t.Fatalf("get of PE %d's grown heap: %v, equal %v", to, err, bytes.Equal(got, pattern(900, byte(from))))
			}
		}
		if v, err := w.path(t, to, to).Atomic(transport.AtomicFetch, 8, 160<<10, 0, 0); err != nil || v != 1+2+3 {
			t.Fatalf("PE %d counter in the grown heap = %d, %v; want 6", to, v, err)
		}
		from := (to + 2) % 3
		if off := 16<<10 + from*(40<<10); !bytes.Equal(heaps[to][:limit][off:off+len(big)], big) {
			t.Fatalf("PE %d: the big put from %d across the first heap's end did not land", to, from)
		}
	}
}

// GrowHeap and UpdatePeers refuse what cannot be: a size past the
// reservation, an address that shrinks a heap, moves it, or names
// another rank, junk; a closed node.
func TestGrowHeapRefuses(t *testing.T) {
	const initial, limit = 8 << 10, 32 << 10
	heaps := make([][]byte, 2)
	w := newWorld(t, 2, 0, func(c *Config) { heaps[c.Rank] = reserve(t, initial, limit); c.Heap = heaps[c.Rank] })
	n0, n1 := w.nodes[0], w.nodes[1]
	if err := n0.GrowHeap(limit + 4096); !isInvalid(err) {
		t.Fatalf("GrowHeap past the reservation: %v", err)
	}
	mapRW(t, heaps[1][:limit], limit)
	if err := n1.GrowHeap(limit); err != nil {
		t.Fatal(err)
	}
	grown := n1.Address()
	if err := n0.UpdatePeers([][]byte{nil, grown}); err != nil {
		t.Fatal(err)
	}
	old, _ := DecodeAddress(grown)
	old.HeapSize = initial
	shrunk, _ := old.MarshalBinary()
	if err := n0.UpdatePeers([][]byte{nil, shrunk}); !isInvalid(err) {
		t.Fatalf("UpdatePeers with a smaller heap: %v", err)
	}
	if err := n0.UpdatePeers([][]byte{grown}); !isInvalid(err) {
		t.Fatalf("UpdatePeers with rank 1's address at index 0: %v", err)
	}
	if err := n0.UpdatePeers([][]byte{nil, []byte("junk")}); !isInvalid(err) {
		t.Fatalf("UpdatePeers with junk: %v", err)
	}
	if err := n0.UpdatePeers(make([][]byte, 3)); !isInvalid(err) {
		t.Fatalf("UpdatePeers with 3 addresses for 2 PEs: %v", err)
	}
	// A refused update leaves the path as it was: the grown heap is reached.
	if err := w.path(t, 0, 1).Put(limit-8, []byte{9}); err != nil {
		t.Fatal(err)
	}
	if err := n0.Engine().Quiet(); err != nil || heaps[1][:limit][limit-8] != 9 {
		t.Fatalf("put into the grown heap after refused updates: %v, byte %d", err, heaps[1][:limit][limit-8])
	}
	n0.Close()
	if err := n0.GrowHeap(limit); !errors.Is(err, errs.ErrFinalized) {
		t.Fatalf("GrowHeap after Close: %v", err)
	}
}
