//go:build cgo && goshmem_fabric

package fabric

import (
	"bytes"
	"testing"

	"github.com/goshmem/shmem/transport"
)

// TestPutSignalOrdering: the receiver polls the signal word; whenever it
// sees round r, the data of round r is already there.
func TestPutSignalOrdering(t *testing.T) {
	w := newWorld(t, 2, 64<<10, smallBounce)
	p := w.path(t, 0, 1)
	const sig = 0
	for r := uint64(1); r <= 40; r++ {
		n := []int{8, 200, 5000}[r%3] // inject, bounce and direct data
		data := pattern(n, byte(r))
		if err := p.PutSignal(64, data, sig, r, transport.SignalSet); err != nil {
			t.Fatal(err)
		}
		// PutSignal returned: the signal may still be in flight, but the
		// data is delivered before it. Poll as a waiter would.
		for transport.Load64(w.heaps[1], sig) != r {
			if err := w.nodes[0].Engine().Quiet(); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(w.heaps[1][64:64+n], data) {
			t.Fatalf("round %d: signal visible before data", r)
		}
	}
	if err := p.PutSignal(64, nil, 8, 5, transport.SignalAdd); err != nil {
		t.Fatal(err)
	}
	if err := p.PutSignal(64, []byte{1}, 8, 6, transport.SignalAdd); err != nil {
		t.Fatal(err)
	}
	if err := w.nodes[0].Engine().Quiet(); err != nil {
		t.Fatal(err)
	}
	if got := transport.Load64(w.heaps[1], 8); got != 11 {
		t.Fatalf("signal add: %d, want 11", got)
	}
	if err := p.PutSignal(0, []byte{1}, 3, 1, transport.SignalSet); !isInvalid(err) {
		t.Fatalf("misaligned signal: %v", err)
	}
}

// TestFenceOrdersPuts: after a Fence, a later put to the same peer lands
// after the earlier ones even when they take different routes.
func TestFenceOrdersPuts(t *testing.T) {
	w := newWorld(t, 2, 64<<10, smallBounce)
	p, eng := w.path(t, 0, 1), w.nodes[0].Engine()
	for r := byte(1); r <= 20; r++ {
		if err := p.Put(4096, pattern(20000, r)); err != nil { // direct route
			t.Fatal(err)
		}
		if err := p.Put(100, pattern(3000, r)); err != nil { // bounce route, asynchronous
			t.Fatal(err)
		}
		if err := eng.Fence(); err != nil {
			t.Fatal(err)
		}
		if err := p.Put(0, []byte{r}); err != nil { // inject flag
			t.Fatal(err)
		}
		for w.heaps[1][0] != r {
			if err := eng.Quiet(); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(w.heaps[1][100:3100], pattern(3000, r)) {
			t.Fatalf("round %d: flag before the fenced put", r)
		}
	}
}
