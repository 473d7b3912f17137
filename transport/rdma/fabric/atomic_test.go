//go:build cgo && goshmem_fabric

package fabric

import (
	"encoding/binary"
	"sync"
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

func TestAtomicOpsValues(t *testing.T) {
	w := newWorld(t, 2, 4096, nil)
	p := w.path(t, 0, 1)
	h := w.heaps[1]
	type tc struct {
		op                  transport.AtomicOp
		start, operand, cnd uint64
		want                uint64 // word afterwards; every op returns start
	}
	cases := []tc{
		{transport.AtomicFetch, 0x1234, 0, 0, 0x1234},
		{transport.AtomicSet, 7, 0xdead, 0, 0xdead},
		{transport.AtomicSwap, 9, 0xbeef, 0, 0xbeef},
		{transport.AtomicCompareSwap, 5, 77, 5, 77},
		{transport.AtomicCompareSwap, 5, 77, 6, 5},
		{transport.AtomicFetchAdd, 40, 2, 0, 42},
		{transport.AtomicFetchAdd, 0xffffffff, 1, 0, 0x100000000}, // wraps at width 4
		{transport.AtomicFetchAnd, 0b1100, 0b1010, 0, 0b1000},
		{transport.AtomicFetchOr, 0b1100, 0b1010, 0, 0b1110},
		{transport.AtomicFetchXor, 0b1100, 0b1010, 0, 0b0110},
	}
	for _, width := range []int{4, 8} {
		mask := uint64(1<<(8*width) - 1)
		if width == 8 {
			mask = ^uint64(0)
		}
		for i, c := range cases {
			off := uint64(64 + 16*i)
			setWord(h, off, width, c.start&mask)
			old, err := p.Atomic(c.op, width, off, c.operand, c.cnd)
			if err != nil {
				t.Fatalf("width %d op %d: %v", width, c.op, err)
			}
			if old != c.start&mask {
				t.Fatalf("width %d op %d returned %#x, want %#x", width, c.op, old, c.start&mask)
			}
			if got := word(h, off, width); got != c.want&mask {
				t.Fatalf("width %d op %d left %#x, want %#x", width, c.op, got, c.want&mask)
			}
			// The non-fetching form, completed by Quiet.
			if c.op == transport.AtomicFetch || c.op == transport.AtomicCompareSwap {
				continue
			}
			setWord(h, off, width, c.start&mask)
			if err := p.AtomicPost(c.op, width, off, c.operand); err != nil {
				t.Fatal(err)
			}
			if err := w.nodes[0].Engine().Quiet(); err != nil {
				t.Fatal(err)
			}
			if got := word(h, off, width); got != c.want&mask {
				t.Fatalf("posted width %d op %d left %#x, want %#x", width, c.op, got, c.want&mask)
			}
		}
	}
	t.Logf("provider %s atomics: fetch %v post %v", w.nodes[0].Provider(), w.nodes[0].atom.fetch, w.nodes[0].atom.post)
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

// TestConcurrentAtomicsAndPuts: many goroutines of two PEs add to one word
// and put to their own cells at once; no update is lost.
func TestConcurrentAtomicsAndPuts(t *testing.T) {
	w := newWorld(t, 3, 4096, nil)
	const gs, iters = 4, 100
	var wg sync.WaitGroup
	errc := make(chan error, 2*gs)
	for from := 0; from < 2; from++ {
		p := w.path(t, from, 2)
		for g := 0; g < gs; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cell := uint64(64 + 8*(from*gs+g))
				for i := 0; i < iters; i++ {
					var err error
					if i%2 == 0 {
						_, err = p.Atomic(transport.AtomicFetchAdd, 8, 0, 1, 0)
					} else {
						err = p.AtomicPost(transport.AtomicFetchAdd, 8, 0, 1)
					}
					if err == nil {
						var b [8]byte
						binary.NativeEndian.PutUint64(b[:], uint64(i))
						err = p.Put(cell, b[:])
					}
					if err != nil {
						errc <- err
						return
					}
				}
				errc <- w.nodes[from].Engine().Quiet()
			}()
		}
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := word(w.heaps[2], 0, 8); got != 2*gs*iters {
		t.Fatalf("counter %d, want %d", got, 2*gs*iters)
	}
	for c := 0; c < 2*gs; c++ {
		if got := word(w.heaps[2], uint64(64+8*c), 8); got != iters-1 {
			t.Fatalf("cell %d = %d, want %d", c, got, iters-1)
		}
	}
}
