package rdma

import (
	"bytes"
	"testing"

	"github.com/goshmem/shmem/transport"
)

// A reaches C only through B: every operation works and Quiet covers it.
func TestRelay(t *testing.T) {
	w := newWorld(t, 3, 2<<20, nil)
	const a, b, c = 0, 1, 2
	w.path(b, c) // B's route to C
	p := w.nodes[a].RelayPath(c, b, w.nodes[b].Addr())
	eng := w.nodes[a].Engine()

	for _, n := range []int{8, 100 << 10, 1<<20 + 5} {
		src := pattern(n, byte(n))
		if err := p.Put(16, src); err != nil {
			t.Fatal(err)
		}
		if err := eng.Quiet(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(w.heaps[c][16:16+n], src) {
			t.Fatalf("relayed put of %d bytes not at C after Quiet", n)
		}
		if bytes.Equal(w.heaps[b][16:16+n], src) {
			t.Fatal("relayed put landed at B")
		}
		got := make([]byte, n)
		if err := p.Get(got, 16); err != nil || !bytes.Equal(got, src) {
			t.Fatalf("relayed get of %d bytes: %v", n, err)
		}
		nbi := make([]byte, n)
		if err := p.GetNBI(nbi, 16); err != nil {
			t.Fatal(err)
		}
		if err := eng.Quiet(); err != nil || !bytes.Equal(nbi, src) {
			t.Fatalf("relayed GetNBI of %d bytes: %v", n, err)
		}
	}
	old, err := p.Atomic(transport.AtomicFetchAdd, 8, 8, 5, 0)
	if err != nil || old != 0 { // word 8 of C's heap is untouched: puts start at 16
		t.Fatalf("relayed fetch-add: old %d, %v", old, err)
	}
	if err := p.AtomicPost(transport.AtomicFetchAdd, 8, 8, 2); err != nil {
		t.Fatal(err)
	}
	if err := eng.Quiet(); err != nil {
		t.Fatal(err)
	}
	if got := transport.Load64(w.heaps[c], 8); got != 7 {
		t.Fatalf("word at C: %d, want 7", got)
	}
	src := pattern(4096, 1)
	if err := p.PutSignal(1<<20, src, 0, 99, transport.SignalSet); err != nil {
		t.Fatal(err)
	}
	if err := w.waitWord(c, 0, 99); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(w.heaps[c][1<<20:1<<20+4096], src) {
		t.Fatal("relayed signal before data")
	}
}

// A relay with no route to the target reports the target failed.
func TestRelayNoRoute(t *testing.T) {
	w := newWorld(t, 3, 4096, nil)
	p := w.nodes[0].RelayPath(2, 1, w.nodes[1].Addr())
	wantPEFailed(t, p.Get(make([]byte, 8), 0), 2)
	if err := p.Put(0, []byte{1}); err != nil {
		t.Fatal(err) // the put itself is accepted by the relay ...
	}
	wantPEFailed(t, w.nodes[0].Engine().Quiet(), 2) // ... and reported at Quiet
}

// The relay's route dying fails the relayed operations naming the target.
func TestRelayTargetDies(t *testing.T) {
	w := newWorld(t, 3, 4096, nil)
	w.path(1, 2)
	p := w.nodes[0].RelayPath(2, 1, w.nodes[1].Addr())
	if err := p.Put(0, []byte{1}); err != nil {
		t.Fatal(err)
	}
	if err := w.nodes[0].Engine().Quiet(); err != nil {
		t.Fatal(err)
	}
	w.nodes[2].Close()
	_, err := p.Atomic(transport.AtomicFetch, 8, 0, 0, 0)
	wantPEFailed(t, err, 2)
}
