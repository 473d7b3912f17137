//go:build cgo && goshmem_fabric

package fabric

import (
	"errors"
	"testing"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
)

func newStream(t *testing.T, n *Node) transport.Stream {
	t.Helper()
	st, err := n.Engine().(transport.Streamer).NewStream()
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func streamPath(t *testing.T, st transport.Stream, p transport.Path) transport.Path {
	t.Helper()
	q, ok := st.Path(p)
	if !ok {
		t.Fatal("the stream refused a path of its node")
	}
	if q.Engine() != transport.Engine(&st.(*stream).eng) {
		t.Fatal("a stream path's engine is not the stream's")
	}
	return q
}

// A stream's Quiet waits for the stream's own operations only: while the
// node's engine and a second stream each have a put outstanding to a
// stopped peer, an idle stream quiets at once, and so does one whose
// puts, atomics and gets went to a live peer (itself, through the NIC),
// with the values there. Once the peer runs again the others complete.
func TestStreamQuietIsIndependent(t *testing.T) {
	n := newWorld(t, 1, 4096, func(c *Config) { c.NPEs = 2 }).nodes[0]
	heap0 := n.cfg.Heap
	peer := startPeerProc(t, n)
	toPeer, _ := n.Path(1)
	toSelf, _ := n.Path(0)
	idle, busy := newStream(t, n), newStream(t, n)
	busyPeer := streamPath(t, busy, toPeer)
	// Each endpoint connects to the peer on first use, which a stopped
	// peer would never answer: connect both while it runs.
	for _, warm := range []struct {
		p   transport.Path
		eng transport.Engine
	}{{toPeer, n.Engine()}, {busyPeer, busy}} {
		if err := warm.p.Put(8, []byte{0}); err != nil {
			t.Fatal(err)
		}
		if err := warm.eng.Quiet(); err != nil {
			t.Fatal(err)
		}
	}
	peer.stop(t)
	if err := toPeer.Put(8, []byte{0xa1}); err != nil {
		t.Fatal(err)
	}
	nodeQuiet := make(chan error, 1)
	go func() { nodeQuiet <- n.Engine().Quiet() }()
	if err := idle.Quiet(); err != nil {
		t.Fatalf("idle stream: Quiet = %v", err)
	}
	if err := busyPeer.Put(16, []byte{0xb2}); err != nil {
		t.Fatal(err)
	}
	busyQuiet := make(chan error, 1)
	go func() { busyQuiet <- busy.Quiet() }()

	self := streamPath(t, idle, toSelf)
	if err := self.Put(100, []byte{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	if err := self.AtomicPost(transport.AtomicFetchAdd, 8, 200, 5); err != nil {
		t.Fatal(err)
	}
	if err := idle.Quiet(); err != nil {
		t.Fatalf("stream to a live peer: Quiet = %v", err)
	}
	if string(heap0[100:104]) != "\x01\x02\x03\x04" || heap0[200] != 5 {
		t.Fatalf("after the stream's Quiet the live peer holds %v and %d", heap0[100:104], heap0[200])
	}
	if old, err := self.Atomic(transport.AtomicFetchAdd, 8, 200, 1, 0); err != nil || old != 5 {
		t.Fatalf("fetch-add on the stream = %d, %v; want 5", old, err)
	}
	select {
	case err := <-nodeQuiet:
		t.Fatalf("the node's Quiet returned (%v) while its peer was stopped", err)
	case err := <-busyQuiet:
		t.Fatalf("the busy stream's Quiet returned (%v) while its peer was stopped", err)
	default:
	}
	peer.resume(t)
	if err := <-nodeQuiet; err != nil {
		t.Fatalf("node Quiet after the peer resumed: %v", err)
	}
	if err := <-busyQuiet; err != nil {
		t.Fatalf("busy stream Quiet after the peer resumed: %v", err)
	}
	got := make([]byte, 2)
	if err := streamPath(t, idle, toPeer).Get(got[:1], 8); err != nil {
		t.Fatal(err)
	}
	if err := toPeer.Get(got[1:], 16); err != nil {
		t.Fatal(err)
	}
	if got[0] != 0xa1 || got[1] != 0xb2 {
		t.Fatalf("the peer holds %#x and %#x, want 0xa1 and 0xb2", got[0], got[1])
	}
	if err := idle.Close(); err != nil {
		t.Fatal(err)
	}
	if err := self.Put(0, []byte{1}); !errors.Is(err, errs.ErrFinalized) {
		t.Fatalf("put on a destroyed stream: %v, want ErrFinalized", err)
	}
	if err := idle.Quiet(); !errors.Is(err, errs.ErrFinalized) && err != nil {
		t.Fatalf("Quiet on a destroyed stream: %v", err)
	}
	busy.Close()
	busy.Close() // twice: nothing
}

// Streams created and destroyed in a loop reuse one endpoint: a destroyed
// stream with nothing in flight hands its endpoint to the next, whose
// Quiet counts from where the last one left off.
func TestStreamEndpointReused(t *testing.T) {
	w := newWorld(t, 2, 4096, nil)
	n := w.nodes[0]
	for i := 0; i < 20; i++ {
		st := newStream(t, n)
		if err := streamPath(t, st, w.path(t, 0, 1)).Put(uint64(i), []byte{byte(i + 1)}); err != nil {
			t.Fatal(err)
		}
		if err := st.Quiet(); err != nil {
			t.Fatal(err)
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 20; i++ {
		if w.heaps[1][i] != byte(i+1) {
			t.Fatalf("byte %d = %d, want %d", i, w.heaps[1][i], i+1)
		}
	}
	n.mu.Lock()
	live, idle := len(n.streams), len(n.idle)
	n.mu.Unlock()
	if live != 0 || idle != 1 {
		t.Fatalf("%d live and %d idle stream endpoints after 20 streams one after another, want 0 and 1", live, idle)
	}
}

// Streams share the node's failures: PeerFailed fails a stream's path to
// the peer (made before or after), and closing the node fails every
// stream and refuses new ones.
func TestStreamFollowsNodeFailure(t *testing.T) {
	w := newWorld(t, 3, 4096, nil)
	n := w.nodes[0]
	st := newStream(t, n)
	before := streamPath(t, st, w.path(t, 0, 1))
	if err := before.Put(0, []byte{5}); err != nil {
		t.Fatal(err)
	}
	if err := st.Quiet(); err != nil || w.heaps[1][0] != 5 {
		t.Fatalf("Quiet = %v, peer holds %d", err, w.heaps[1][0])
	}
	n.PeerFailed(1)
	if err := before.Put(0, []byte{6}); !errors.Is(err, errs.ErrPEFailed) {
		t.Fatalf("put after PeerFailed on a path made before: %v", err)
	}
	after := streamPath(t, newStream(t, n), w.path(t, 0, 1))
	if err := after.Put(0, []byte{6}); !errors.Is(err, errs.ErrPEFailed) {
		t.Fatalf("put after PeerFailed on a path made after: %v", err)
	}
	live := streamPath(t, st, w.path(t, 0, 2))
	n.Close()
	if err := live.Put(0, []byte{7}); !errors.Is(err, errs.ErrFinalized) {
		t.Fatalf("put on a stream of a closed node: %v", err)
	}
	if _, err := n.Engine().(transport.Streamer).NewStream(); !errors.Is(err, errs.ErrFinalized) {
		t.Fatalf("NewStream on a closed node: %v", err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
}

// A stream's hot path allocates nothing, as the node's does: puts (inject
// and bounce), a posted atomic and Quiet, into a grown heap's new part.
func TestStreamHotPathAllocatesNothing(t *testing.T) {
	const initial, limit = 16 << 10, 64 << 10
	heaps := make([][]byte, 2)
	w := newWorld(t, 2, 0, func(c *Config) { heaps[c.Rank] = reserve(t, initial, limit); c.Heap = heaps[c.Rank] })
	mapRW(t, heaps[1][:limit], limit)
	if err := w.nodes[1].GrowHeap(limit); err != nil {
		t.Fatal(err)
	}
	if err := w.nodes[0].UpdatePeers([][]byte{nil, w.nodes[1].Address()}); err != nil {
		t.Fatal(err)
	}
	st := newStream(t, w.nodes[0])
	p := streamPath(t, st, w.path(t, 0, 1))
	small, medium := []byte{1, 2, 3, 4}, pattern(2000, 1)
	run := func() {
		if err := p.Put(40<<10, small); err != nil {
			t.Fatal(err)
		}
		if err := p.Put(48<<10, medium); err != nil {
			t.Fatal(err)
		}
		if err := p.AtomicPost(transport.AtomicFetchAdd, 8, 60<<10, 1); err != nil {
			t.Fatal(err)
		}
		if err := st.Quiet(); err != nil {
			t.Fatal(err)
		}
	}
	run() // first use connects the endpoint
	if a := testing.AllocsPerRun(50, run); a != 0 {
		t.Fatalf("%v allocations per put, put, atomic and Quiet on a stream", a)
	}
	if got := heaps[1][:limit][60<<10]; got != 52 { // AllocsPerRun runs it once more to warm up
		t.Fatalf("counter in the grown heap = %d, want 52", got)
	}
}
