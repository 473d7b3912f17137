package rdma

import (
	"errors"
	"net"
	"sync"
	"testing"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
)

// stallPeer accepts connections and never reads them: writes to it are
// never acknowledged, as from a peer that stopped. close drops them.
type stallPeer struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
	done  chan struct{}
}

func newStallPeer(t *testing.T) *stallPeer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &stallPeer{ln: ln, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
		}
	}()
	return s
}

func (s *stallPeer) close() {
	s.ln.Close()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		c.Close()
	}
}

// A stream's Quiet waits for the stream's own writes only: with the node's
// stream stuck on a peer that never acknowledges, a stream that wrote
// nothing quiets at once, and one that wrote to a live peer quiets once
// that peer has applied its writes.
func TestStreamQuietIsIndependent(t *testing.T) {
	w := newWorld(t, 3, 4096, nil) // rank 1's node is unused: the stalled peer stands in for it
	stall := newStallPeer(t)
	n := w.nodes[0]
	stuck := n.Path(1, stall.ln.Addr().String())
	live := n.Path(2, w.nodes[2].Addr())
	if err := stuck.Put(0, []byte{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	quieted := make(chan error, 1)
	go func() { quieted <- n.Engine().Quiet() }()

	st, err := n.Engine().(transport.Streamer).NewStream()
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Quiet(); err != nil {
		t.Fatalf("idle stream: Quiet = %v", err)
	}
	sp, ok := st.Path(live)
	if !ok {
		t.Fatal("the stream refused a path of its node")
	}
	if sp.Engine() != transport.Engine(&st.(*stream).eng) {
		t.Fatal("a stream path's engine is not the stream's")
	}
	if err := sp.Put(8, []byte{7, 7, 7, 7}); err != nil {
		t.Fatal(err)
	}
	if err := st.Quiet(); err != nil {
		t.Fatalf("stream to a live peer: Quiet = %v", err)
	}
	if got := w.heaps[2][8:12]; string(got) != "\x07\x07\x07\x07" {
		t.Fatalf("after the stream's Quiet, peer 2 holds %v", got)
	}
	select {
	case err := <-quieted:
		t.Fatalf("the node's Quiet returned (%v) while its peer never acknowledged", err)
	default:
	}
	// The stream's own path to the stalled peer is a separate connection:
	// nothing was written on it, so it stays out of the stream's Quiet.
	if _, ok := st.Path(stuck); !ok {
		t.Fatal("no stream path to the stalled peer")
	}
	if err := st.Quiet(); err != nil {
		t.Fatalf("stream with an unused path to the stalled peer: Quiet = %v", err)
	}
	stall.close()
	if err := <-quieted; !errors.Is(err, errs.ErrPEFailed) {
		t.Fatalf("node Quiet after the stalled peer dropped: %v, want ErrPEFailed", err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if err := sp.Put(0, []byte{1}); !errors.Is(err, errs.ErrFinalized) {
		t.Fatalf("put on a closed stream: %v, want ErrFinalized", err)
	}
	if _, err := n.Engine().(transport.Streamer).NewStream(); err != nil {
		t.Fatal(err)
	}
}

// Streams share the node's failure: a peer marked failed fails the
// stream's path to it, and closing the node fails every stream.
func TestStreamFollowsNodeFailure(t *testing.T) {
	w := newWorld(t, 2, 4096, nil)
	n := w.nodes[0]
	st, err := n.Engine().(transport.Streamer).NewStream()
	if err != nil {
		t.Fatal(err)
	}
	sp, _ := st.Path(w.path(0, 1))
	if err := sp.Put(0, []byte{5}); err != nil {
		t.Fatal(err)
	}
	if err := st.Quiet(); err != nil || w.heaps[1][0] != 5 {
		t.Fatalf("Quiet = %v, peer holds %d", err, w.heaps[1][0])
	}
	n.PeerFailed(1)
	if err := sp.Put(0, []byte{6}); !errors.Is(err, errs.ErrPEFailed) {
		t.Fatalf("put after PeerFailed: %v", err)
	}
	n.Close()
	if _, err := n.Engine().(transport.Streamer).NewStream(); !errors.Is(err, errs.ErrFinalized) {
		t.Fatalf("NewStream on a closed node: %v", err)
	}
}
