//go:build cgo && goshmem_fabric

package fabric

import (
	"encoding/binary"
	"testing"

	"github.com/goshmem/shmem/transport"
)

func word(h []byte, off uint64, width int) uint64 {
	if width == 4 {
		return uint64(binary.NativeEndian.Uint32(h[off:]))
	}
	return binary.NativeEndian.Uint64(h[off:])
}

func setWord(h []byte, off uint64, width int, v uint64) {
	if width == 4 {
		binary.NativeEndian.PutUint32(h[off:], uint32(v))
		return
	}
	binary.NativeEndian.PutUint64(h[off:], v)
}

// TestCASLoopFallback forces the fallback for every op, as on a provider
// that only implements compare-and-swap.
func TestCASLoopFallback(t *testing.T) {
	w := newWorld(t, 2, 4096, nil)
	n := w.nodes[0]
	for op := range n.atom.fetch {
		if op != int(transport.AtomicCompareSwap) {
			n.atom.fetch[op] = [2]bool{}
			n.atom.post[op] = [2]bool{}
		}
	}
	n.atom.read = [2]bool{}
	p := w.path(t, 0, 1)
	setWord(w.heaps[1], 8, 8, 40)
	if old, err := p.Atomic(transport.AtomicFetchAdd, 8, 8, 2, 0); err != nil || old != 40 {
		t.Fatalf("fallback fetch-add: %d %v", old, err)
	}
	if err := p.AtomicPost(transport.AtomicFetchXor, 8, 8, 1); err != nil {
		t.Fatal(err)
	}
	if got := word(w.heaps[1], 8, 8); got != 43 {
		t.Fatalf("after fallback add and xor: %d, want 43", got)
	}
	if old, err := p.Atomic(transport.AtomicFetch, 4, 8, 0, 0); err != nil || old != 43 {
		t.Fatalf("fallback fetch: %d %v", old, err)
	}
	n.atom.cswap = [2]bool{}
	if _, err := p.Atomic(transport.AtomicFetchAdd, 8, 8, 1, 0); !isInvalid(err) {
		t.Fatalf("without compare-and-swap: %v", err)
	}
}
