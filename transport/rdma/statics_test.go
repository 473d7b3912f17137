package rdma

import (
	"bytes"
	"errors"
	"testing"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
)

// Offsets from transport.StaticsBase reach the peer's statics region,
// directly and through a relay: puts, gets, atomics, and put-with-signal
// with either part there and the other in the heap. The heap is left
// alone where no offset named it.
func TestStatics(t *testing.T) {
	const a, b, c = 0, 1, 2
	w := newWorld(t, 3, 4096, func(cfg *Config) { cfg.Statics = make([]byte, 1024, 1024+guardBytes) })
	region := func(r int) []byte { return w.nodes[r].cfg.Statics }
	w.path(b, c) // B's route to C
	eng := w.nodes[a].Engine()
	for name, tc := range map[string]struct {
		to   int
		path transport.Path
	}{
		"direct":  {b, w.path(a, b)},
		"relayed": {c, w.nodes[a].RelayPath(c, b, w.nodes[b].Addr())},
	} {
		p, st, heap := tc.path, region(tc.to), w.heaps[tc.to]
		src := pattern(100, 3)
		if err := p.Put(transport.StaticsBase+16, src); err != nil {
			t.Fatal(err)
		}
		if err := eng.Quiet(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(st[16:116], src) {
			t.Fatalf("%s: put not in the statics", name)
		}
		got := make([]byte, 100)
		if err := p.Get(got, transport.StaticsBase+16); err != nil || !bytes.Equal(got, src) {
			t.Fatalf("%s: get from the statics: %v", name, err)
		}
		if old, err := p.Atomic(transport.AtomicFetchAdd, 8, transport.StaticsBase+512, 5, 0); err != nil || old != 0 {
			t.Fatalf("%s: fetch-add in the statics: old %d, %v", name, old, err)
		}
		if err := p.PutSignal(transport.StaticsBase+600, src[:8], 24, 7, transport.SignalSet); err != nil {
			t.Fatal(err)
		}
		if err := p.PutSignal(32, src[:8], transport.StaticsBase+640, 9, transport.SignalAdd); err != nil {
			t.Fatal(err)
		}
		if err := eng.Quiet(); err != nil {
			t.Fatal(err)
		}
		if transport.Load64(st, 512) != 5 || !bytes.Equal(st[600:608], src[:8]) || transport.Load64(heap, 24) != 7 ||
			!bytes.Equal(heap[32:40], src[:8]) || transport.Load64(st, 640) != 9 {
			t.Fatalf("%s: atomic or signals misplaced", name)
		}
		if !bytes.Equal(heap[:24], make([]byte, 24)) || !bytes.Equal(heap[40:], make([]byte, len(heap)-40)) {
			t.Fatalf("%s: the heap changed where nothing named it", name)
		}
	}
	if !bytes.Equal(region(a), make([]byte, 1024)) {
		t.Fatal("the sender's statics changed")
	}
}

// A node without a statics region refuses a request for one as any other
// out of its range: the connection fails, so the operation reports the
// peer failed and nothing is written.
func TestStaticsAbsent(t *testing.T) {
	w := newWorld(t, 2, 4096, nil)
	p := w.path(0, 1)
	err := p.Put(transport.StaticsBase, []byte{1, 2, 3})
	if err == nil {
		err = w.nodes[0].Engine().Quiet()
	}
	if !errors.Is(err, errs.ErrPEFailed) {
		t.Fatalf("put to absent statics: %v, want ErrPEFailed", err)
	}
	if !bytes.Equal(w.heaps[1], make([]byte, 4096)) {
		t.Fatal("the heap changed")
	}
}
