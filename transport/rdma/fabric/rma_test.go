//go:build cgo && goshmem_fabric

package fabric

import (
	"bytes"
	"testing"

	"github.com/goshmem/shmem/transport"
)

// Sizes cover the three put routes: inject, bounce buffer, pinned direct
// (BounceSize is 4 KiB here so that the direct route stays cheap).
var sizes = []int{1, 8, 63, 64, 65, 1000, 4096, 4097, 100 << 10}

func smallBounce(c *Config) { c.BounceSize = 4096 }

func TestPutGetValues(t *testing.T) {
	w := newWorld(t, 2, 256<<10, smallBounce)
	p, eng := w.path(t, 0, 1), w.nodes[0].Engine()
	t.Logf("provider %s, inject %d", w.nodes[0].Provider(), w.nodes[0].inject)
	for i, n := range sizes {
		src := pattern(n, byte(i))
		off := uint64(8 * i)
		if err := p.Put(off, src); err != nil {
			t.Fatalf("Put %d: %v", n, err)
		}
		clear(src) // Put returned: src is reusable and must not be read again
		if err := eng.Quiet(); err != nil {
			t.Fatalf("Quiet after Put %d: %v", n, err)
		}
		if want := pattern(n, byte(i)); !bytes.Equal(w.heaps[1][off:off+uint64(n)], want) {
			t.Fatalf("Put %d bytes: peer heap differs", n)
		}
		got := make([]byte, n)
		if err := p.Get(got, off); err != nil {
			t.Fatalf("Get %d: %v", n, err)
		}
		if !bytes.Equal(got, pattern(n, byte(i))) {
			t.Fatalf("Get %d bytes: wrong data", n)
		}
	}
}

func TestGetSeesOwnPut(t *testing.T) {
	w := newWorld(t, 2, 4096, nil)
	p := w.path(t, 0, 1)
	for v := byte(1); v < 50; v++ {
		if err := p.Put(16, []byte{v, v, v}); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, 3)
		if err := p.Get(got, 16); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, []byte{v, v, v}) {
			t.Fatalf("Get after Put %d read %v", v, got)
		}
	}
}

func TestGetNBIFilledByQuiet(t *testing.T) {
	w := newWorld(t, 2, 64<<10, smallBounce)
	copy(w.heaps[1], pattern(len(w.heaps[1]), 3))
	p, eng := w.path(t, 0, 1), w.nodes[0].Engine()
	dsts := make([][]byte, 0, 20)
	for i := 0; i < 20; i++ {
		n := 1 + i*300 // up to ~6 KiB: bounce and direct routes
		d := make([]byte, n)
		if err := p.GetNBI(d, uint64(i*100)); err != nil {
			t.Fatal(err)
		}
		dsts = append(dsts, d)
	}
	if err := eng.Quiet(); err != nil {
		t.Fatal(err)
	}
	for i, d := range dsts {
		if want := w.heaps[1][i*100 : i*100+len(d)]; !bytes.Equal(d, want) {
			t.Fatalf("GetNBI %d: wrong data after Quiet", i)
		}
	}
}

func TestSelfAndThreeNodes(t *testing.T) {
	w := newWorld(t, 3, 4096, nil)
	for from := 0; from < 3; from++ {
		for to := 0; to < 3; to++ {
			p := w.path(t, from, to)
			if err := p.Put(uint64(8*from), []byte{byte(10*from + to)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.nodes[from].Engine().Quiet(); err != nil {
			t.Fatal(err)
		}
	}
	for to := 0; to < 3; to++ {
		for from := 0; from < 3; from++ {
			if got := w.heaps[to][8*from]; got != byte(10*from+to) {
				t.Fatalf("PE %d slot %d = %d", to, from, got)
			}
		}
	}
}

func TestRangeChecked(t *testing.T) {
	w := newWorld(t, 2, 4096, nil)
	p := w.path(t, 0, 1)
	if err := p.Put(4090, make([]byte, 8)); !isInvalid(err) {
		t.Fatalf("Put past the end: %v", err)
	}
	if err := p.Get(make([]byte, 1), 1<<63); !isInvalid(err) {
		t.Fatalf("Get far past the end: %v", err)
	}
	if _, err := p.Atomic(transport.AtomicFetchAdd, 8, 4, 1, 0); !isInvalid(err) {
		t.Fatalf("misaligned atomic: %v", err)
	}
	if p.Ptr(0, 8) != nil {
		t.Fatal("Ptr of a fabric path is not nil")
	}
}
