//go:build cgo && goshmem_fabric

package fabric

import (
	"bytes"
	"math"
	"testing"
	"unsafe"

	"github.com/goshmem/shmem/transport"
)

const staticsSize = 1024

// staticsWorld is newWorld whose nodes each register a statics region of
// staticsSize bytes (with a guard page behind it, as the heap has),
// returned by rank; tweak runs after the region is set.
func staticsWorld(t *testing.T, npes int, tweak func(*Config)) (*world, [][]byte) {
	t.Helper()
	regions := make([][]byte, npes)
	w := newWorld(t, npes, 4096, func(c *Config) {
		c.Statics = mmapHeap(t, staticsSize)
		regions[c.Rank] = c.Statics
		if tweak != nil {
			tweak(c)
		}
	})
	return w, regions
}

func addrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// zeroExcept reports whether b (and the guard page behind it) is zero but
// for the ranges given as [from, to) pairs.
func zeroExcept(b []byte, keep ...int) bool {
	all := b[:cap(b)]
	for i := range all {
		if all[i] == 0 {
			continue
		}
		kept := false
		for k := 0; k < len(keep); k += 2 {
			kept = kept || (i >= keep[k] && i < keep[k+1])
		}
		if !kept {
			return false
		}
	}
	return true
}

// Offsets from transport.StaticsBase reach the peer's statics region over
// the node's path and a stream's, by every route a put and a get take
// (inject, bounce buffer, pinned), with atomics, and with put-with-signal
// whose data and signal lie one in each region. Nothing else changes:
// neither the peer's heap where no offset named it, nor the sender's own
// region, nor the guard page behind the peer's.
func TestStatics(t *testing.T) {
	const bounce = 256
	w, regions := staticsWorld(t, 3, func(c *Config) { c.BounceSize = bounce })
	w.nodes[0].inject = 16 // so 100 bytes go through the bounce buffer, whatever the provider injects
	stream, err := w.nodes[0].Engine().(transport.Streamer).NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	streamPath, ok := stream.Path(w.path(t, 0, 2))
	if !ok {
		t.Fatal("the stream refused the node's path")
	}
	for _, tc := range []struct {
		name  string
		to    int
		path  transport.Path
		quiet func() error
	}{
		{"node path", 1, w.path(t, 0, 1), w.nodes[0].Engine().Quiet},
		{"stream path", 2, streamPath, stream.Quiet},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, st, heap := tc.path, regions[tc.to], w.heaps[tc.to]
			at := func(x uint64) uint64 { return transport.StaticsBase + x }
			small, mid, big := pattern(8, 1), pattern(100, 2), pattern(600, 3)
			for _, put := range []struct {
				x   uint64
				src []byte
			}{{0, small}, {16, mid}, {128, big}} {
				if err := p.Put(at(put.x), put.src); err != nil {
					t.Fatalf("put of %d bytes: %v", len(put.src), err)
				}
			}
			if err := tc.quiet(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(st[0:8], small) || !bytes.Equal(st[16:116], mid) || !bytes.Equal(st[128:728], big) {
				t.Fatal("puts not in the statics region")
			}
			for _, get := range []struct {
				x    uint64
				want []byte
			}{{16, mid}, {128, big}} {
				got := make([]byte, len(get.want))
				if err := p.Get(got, at(get.x)); err != nil || !bytes.Equal(got, get.want) {
					t.Fatalf("get of %d bytes from the statics region: %v", len(got), err)
				}
			}
			nbi := make([]byte, 100)
			if err := p.GetNBI(nbi, at(16)); err != nil {
				t.Fatal(err)
			}
			if err := tc.quiet(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(nbi, mid) {
				t.Fatal("GetNBI from the statics region: wrong bytes")
			}

			if old, err := p.Atomic(transport.AtomicFetchAdd, 8, at(768), 5, 0); err != nil || old != 0 {
				t.Fatalf("fetch-add in the statics region: old %d, %v", old, err)
			}
			if old, err := p.Atomic(transport.AtomicCompareSwap, 4, at(776), 9, 0); err != nil || old != 0 {
				t.Fatalf("compare-and-swap in the statics region: old %d, %v", old, err)
			}
			if err := p.AtomicPost(transport.AtomicFetchXor, 8, at(784), 0xff); err != nil {
				t.Fatal(err)
			}
			if err := p.PutSignal(at(800), small, 24, 7, transport.SignalSet); err != nil {
				t.Fatal(err)
			}
			if err := p.PutSignal(32, small, at(816), 9, transport.SignalAdd); err != nil {
				t.Fatal(err)
			}
			if err := p.PutSignal(0, nil, at(824), 3, transport.SignalSet); err != nil {
				t.Fatal(err)
			}
			if err := tc.quiet(); err != nil {
				t.Fatal(err)
			}
			if got, err := p.Atomic(transport.AtomicFetch, 8, at(768), 0, 0); err != nil || got != 5 {
				t.Fatalf("fetch from the statics region: %d, %v; want 5", got, err)
			}
			switch {
			case word(st, 768, 8) != 5 || word(st, 776, 4) != 9 || word(st, 784, 8) != 0xff:
				t.Fatalf("atomics: %d %d %#x, want 5 9 0xff", word(st, 768, 8), word(st, 776, 4), word(st, 784, 8))
			case !bytes.Equal(st[800:808], small) || word(st, 816, 8) != 9 || word(st, 824, 8) != 3:
				t.Fatal("put-with-signal: data or signal not in the statics region")
			case word(heap, 24, 8) != 7 || !bytes.Equal(heap[32:40], small):
				t.Fatal("put-with-signal: data or signal not in the heap")
			case !zeroExcept(heap, 24, 40):
				t.Fatal("the heap changed where no offset named it")
			case !zeroExcept(st, 0, 8, 16, 116, 128, 728, 768, 780, 784, 792, 800, 808, 816, 832):
				t.Fatal("the statics region changed where no offset named it")
			}
		})
	}
	if !zeroExcept(regions[0]) {
		t.Fatal("the sender's own statics region changed")
	}
}

// An access that leaves the peer's statics region, or one to a peer that
// registered none, is refused with ErrInvalidArgument before anything is
// posted, the data and the signal of a put-with-signal each checked
// against its own region; an offset between the heap's end and
// transport.StaticsBase is still the heap's, and refused as before.
func TestStaticsRefused(t *testing.T) {
	w, regions := staticsWorld(t, 2, nil)
	p, st := w.path(t, 0, 1), regions[1]
	at := func(x uint64) uint64 { return transport.StaticsBase + x }
	eight := pattern(8, 1)
	for name, f := range map[string]func() error{
		"put past the end":      func() error { return p.Put(at(staticsSize-4), eight) },
		"put far past the end":  func() error { return p.Put(at(math.MaxInt64), eight) },
		"put that wraps":        func() error { return p.Put(math.MaxUint64-3, eight) },
		"get past the end":      func() error { return p.Get(make([]byte, 8), at(staticsSize-4)) },
		"get nbi past the end":  func() error { return p.GetNBI(make([]byte, 2000), at(0)) },
		"atomic at the end":     func() error { _, err := p.Atomic(transport.AtomicFetchAdd, 8, at(staticsSize), 1, 0); return err },
		"atomic post past end":  func() error { return p.AtomicPost(transport.AtomicSet, 4, at(staticsSize), 1) },
		"signal past the end":   func() error { return p.PutSignal(0, eight, at(staticsSize), 1, transport.SignalSet) },
		"data past the end":     func() error { return p.PutSignal(at(staticsSize-4), eight, 0, 1, transport.SignalSet) },
		"heap put below region": func() error { return p.Put(transport.StaticsBase-8, eight) },
	} {
		if err := f(); !isInvalid(err) {
			t.Errorf("%s: %v, want ErrInvalidArgument", name, err)
		}
	}
	if err := w.nodes[0].Engine().Quiet(); err != nil {
		t.Fatal(err)
	}
	if !zeroExcept(st) || !zeroExcept(w.heaps[1]) {
		t.Fatal("a refused access wrote")
	}

	bare := newWorld(t, 2, 4096, nil)
	err := bare.path(t, 0, 1).Put(at(0), eight)
	if !isInvalid(err) {
		t.Fatalf("put to a peer without statics: %v, want ErrInvalidArgument", err)
	}
	if !zeroExcept(bare.heaps[1]) {
		t.Fatal("the heap of the peer without statics changed")
	}
}

// A node's Address names its statics region; growing its heap changes the
// heap's key and size in it, never the region's, and a peer that takes
// the grown Address (UpdatePeers) still reaches the region. An Address
// whose region differs from the one connected is refused.
func TestStaticsAddressAndGrowth(t *testing.T) {
	const initial, limit = 4096, 64 << 10
	heaps := make([][]byte, 2)
	regions := make([][]byte, 2)
	w := newWorld(t, 2, 0, func(c *Config) {
		heaps[c.Rank] = reserve(t, initial, limit)
		c.Heap = heaps[c.Rank]
		c.Statics = mmapHeap(t, staticsSize)
		regions[c.Rank] = c.Statics
	})
	n := w.nodes[1]
	before, err := DecodeAddress(n.Address())
	if err != nil {
		t.Fatal(err)
	}
	if before.StaticsSize != staticsSize || before.StaticsBase != uint64(addrOf(regions[1])) {
		t.Fatalf("address names statics of %d bytes at %#x, want %d at %#x", before.StaticsSize, before.StaticsBase, staticsSize, addrOf(regions[1]))
	}
	mapRW(t, heaps[1][:limit], limit)
	if err := n.GrowHeap(limit); err != nil {
		t.Fatal(err)
	}
	after, err := DecodeAddress(n.Address())
	if err != nil {
		t.Fatal(err)
	}
	if after.HeapSize != limit || after.StaticsBase != before.StaticsBase || after.StaticsSize != before.StaticsSize || after.StaticsKey != before.StaticsKey {
		t.Fatalf("after growth: %+v, before %+v", after, before)
	}
	for name, f := range map[string]func(*Address){
		"size": func(a *Address) { a.StaticsSize = staticsSize * 2 },
		"key":  func(a *Address) { a.StaticsKey++ },
		"none": func(a *Address) { a.StaticsBase, a.StaticsSize, a.StaticsKey = 0, 0, 0 },
	} {
		forged := after
		f(&forged)
		b, err := forged.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if err := w.nodes[0].UpdatePeers([][]byte{nil, b}); !isInvalid(err) {
			t.Errorf("update with the statics region's %s changed: %v, want ErrInvalidArgument", name, err)
		}
	}
	if err := w.nodes[0].UpdatePeers([][]byte{nil, n.Address()}); err != nil {
		t.Fatal(err)
	}
	p := w.path(t, 0, 1)
	if err := p.Put(limit-8, pattern(8, 4)); err != nil {
		t.Fatal(err)
	}
	if err := p.Put(transport.StaticsBase+staticsSize-8, pattern(8, 5)); err != nil {
		t.Fatal(err)
	}
	if err := w.nodes[0].Engine().Quiet(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(heaps[1][:limit][limit-8:], pattern(8, 4)) || !bytes.Equal(regions[1][staticsSize-8:], pattern(8, 5)) {
		t.Fatal("after growth: put not in the grown heap or the statics region")
	}
}
