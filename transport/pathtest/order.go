package pathtest

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/goshmem/shmem/transport"
)

// signalSizes are the data sizes of the ordering tests: none, a word, and
// each threshold's neighbour above, where a transfer changes route.
func (p Provider) signalSizes() []int {
	out := []int{0, 8, 1000}
	for _, th := range p.Thresholds {
		out = append(out, th+1)
	}
	return append(out, 2*p.largest()+3)
}

// testPutSignal: a PE that sees the signal sees the data, at every size,
// without the sender's Quiet; SignalAdd adds; a signal with no data works.
func testPutSignal(t *testing.T, p Provider) {
	sizes := p.signalSizes()
	const sig, data = 0, 64
	w := p.world(t, 2, data+sizes[len(sizes)-1])
	h, bell := w.Heap(1), w.Bell(1)
	path := w.Path(0, 1)
	eng := path.Engine()
	for round, n := range sizes {
		k := uint64(round + 1)
		want := pattern(n, byte(k))
		if err := path.PutSignal(data, want, sig, k, transport.SignalSet); err != nil {
			t.Fatalf("PutSignal of %d bytes: %v", n, err)
		}
		await(t, bell, eng, fmt.Sprintf("signal %d", k), func() bool { return load(h, sig, 8) == k })
		if got := h[data : data+n]; !bytes.Equal(got, want) {
			t.Fatalf("signal %d seen before its %d bytes of data: %s", k, n, firstDiff(got, want))
		}
	}
	base := uint64(len(sizes))
	for i, n := range []int{0, 3, 8} {
		if err := path.PutSignal(data, pattern(n, 9), sig, uint64(10*(i+1)), transport.SignalAdd); err != nil {
			t.Fatal(err)
		}
	}
	want := base + 60
	await(t, bell, eng, "SignalAdd", func() bool { return load(h, sig, 8) == want })
	if err := eng.Quiet(); err != nil {
		t.Fatal(err)
	}
	if got := load(h, sig, 8); got != want {
		t.Fatalf("signal %d after Quiet, want %d", got, want)
	}
}

// testFence: a write issued after Fence is never visible before the writes
// issued before it, whatever routes they took; the flag is a posted atomic
// or a signal in turn. (Not a plain put: the waiter would read its bytes
// while they land, which the race detector rightly reports.)
func testFence(t *testing.T, p Provider) {
	sizes := p.signalSizes()[1:]
	const flag, data = 0, 64
	big := sizes[len(sizes)-1]
	w := p.world(t, 2, data+2*big)
	h, bell := w.Heap(1), w.Bell(1)
	path := w.Path(0, 1)
	eng := path.Engine()
	k := uint64(0)
	for _, n := range sizes {
		for kind := range 2 {
			k++
			first := pattern(n, byte(k))
			second := pattern(big/2, byte(k+100)) // a second route's worth before the Fence
			if err := path.Put(data, first); err != nil {
				t.Fatal(err)
			}
			if err := path.Put(data+uint64(n), second); err != nil {
				t.Fatal(err)
			}
			if err := eng.Fence(); err != nil {
				t.Fatal(err)
			}
			var err error
			switch kind {
			case 0:
				err = path.AtomicPost(transport.AtomicSet, 8, flag, k)
			case 1:
				err = path.PutSignal(flag+8, nil, flag, k, transport.SignalSet)
			}
			if err != nil {
				t.Fatal(err)
			}
			what := fmt.Sprintf("flag %d (kind %d) after %d and %d bytes", k, kind, n, len(second))
			await(t, bell, eng, what, func() bool { return load(h, flag, 8) == k })
			if got := h[data : data+uint64(n)]; !bytes.Equal(got, first) {
				t.Fatalf("%s: first put overtaken: %s", what, firstDiff(got, first))
			}
			if got := h[data+uint64(n) : data+uint64(n)+uint64(len(second))]; !bytes.Equal(got, second) {
				t.Fatalf("%s: second put overtaken: %s", what, firstDiff(got, second))
			}
		}
	}
	if err := eng.Quiet(); err != nil {
		t.Fatal(err)
	}
}

// testQuiet: one Quiet completes everything issued before it, to several
// peers: puts of every route, posted atomics, signals and GetNBIs. The
// values are checked at once after it, with no waiting.
func testQuiet(t *testing.T, p Provider) {
	sizes := p.signalSizes()[1:]
	total := 0
	for _, n := range sizes {
		total += n
	}
	src := 128 + total
	w := p.world(t, 3, src+total+8*512)
	eng := w.Path(0, 1).Engine()
	for _, to := range []int{1, 2} {
		copy(w.Heap(to)[src:], pattern(total, byte(to)))
	}
	type nbi struct {
		to  int
		off int
		dst []byte
	}
	var gets []nbi
	for _, to := range []int{1, 2} {
		path := w.Path(0, to)
		off := 128
		for i, n := range sizes {
			if err := path.Put(uint64(off), pattern(n, byte(10*to+i))); err != nil {
				t.Fatal(err)
			}
			dst := make([]byte, n)
			if err := path.GetNBI(dst, uint64(src+off-128)); err != nil {
				t.Fatal(err)
			}
			gets = append(gets, nbi{to, src + off - 128, dst})
			off += n
		}
		for range 5 {
			if err := path.AtomicPost(transport.AtomicFetchAdd, 8, 0, 3); err != nil {
				t.Fatal(err)
			}
		}
		if err := path.PutSignal(64, []byte{byte(to)}, 8, uint64(to), transport.SignalSet); err != nil {
			t.Fatal(err)
		}
	}
	// A burst of small puts last, so that a Quiet returning before the
	// peers applied them would likely find some still on their way.
	const burst = 512
	stream := make([]byte, 8*burst)
	for i := range burst {
		store(stream, uint64(8*i), 8, uint64(i+1))
		for _, to := range []int{1, 2} {
			if err := w.Path(0, to).Put(uint64(src+total+8*i), stream[8*i:8*i+8]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := eng.Quiet(); err != nil {
		t.Fatal(err)
	}
	for _, to := range []int{1, 2} {
		if got := w.Heap(to)[src+total : src+total+len(stream)]; !bytes.Equal(got, stream) {
			t.Fatalf("PE %d: a burst of %d puts not complete after Quiet: %s", to, burst, firstDiff(got, stream))
		}
	}
	for _, to := range []int{1, 2} {
		h := w.Heap(to)
		off := 128
		for i, n := range sizes {
			if want := pattern(n, byte(10*to+i)); !bytes.Equal(h[off:off+n], want) {
				t.Fatalf("PE %d: %d-byte put not complete after Quiet: %s", to, n, firstDiff(h[off:off+n], want))
			}
			off += n
		}
		if got := load(h, 0, 8); got != 15 {
			t.Errorf("PE %d: posted adds left %d after Quiet, want 15", to, got)
		}
		if got := load(h, 8, 8); got != uint64(to) || h[64] != byte(to) {
			t.Errorf("PE %d: signal %d and data %d after Quiet", to, got, h[64])
		}
	}
	for _, g := range gets {
		if want := w.Heap(g.to)[g.off : g.off+len(g.dst)]; !bytes.Equal(g.dst, want) {
			t.Fatalf("GetNBI of %d bytes from PE %d not filled by Quiet: %s", len(g.dst), g.to, firstDiff(g.dst, want))
		}
	}
}
