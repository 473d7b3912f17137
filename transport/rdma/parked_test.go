package rdma

import (
	"errors"
	"io"
	"net"
	"runtime"
	"testing"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
)

// scriptedPeer accepts one connection and hands its get requests to the
// test, which answers them in the order it chooses.
type scriptedPeer struct {
	ln   net.Listener
	conn chan net.Conn
	reqs chan header
}

func newScriptedPeer(t *testing.T) *scriptedPeer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sp := &scriptedPeer{ln: ln, conn: make(chan net.Conn, 1), reqs: make(chan header, 16)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(sp.reqs)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		sp.conn <- c
		var hb [headerSize]byte
		for {
			if _, err := io.ReadFull(c, hb[:]); err != nil {
				return
			}
			h, err := decodeHeader(hb[:])
			if err != nil {
				return
			}
			sp.reqs <- h
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		select {
		case c := <-sp.conn:
			c.Close()
		default:
		}
		<-done
	})
	return sp
}

// answer sends req's get response filled with fill.
func (sp *scriptedPeer) answer(t *testing.T, c net.Conn, req header, fill byte) {
	resp := header{op: opGetResp, id: req.id, src: req.dst, dst: req.src, n: req.n}
	b := make([]byte, headerSize+int(req.n))
	resp.encode(b)
	for i := headerSize; i < len(b); i++ {
		b[i] = fill
	}
	if _, err := c.Write(b); err != nil {
		t.Error(err)
	}
}

// waitParked returns once a request on l is parked (its caller found the
// read side held and waits for news).
func waitParked(l *lane) {
	for {
		t := l.slots
		for i := 0; i < int(t.n.Load()); i++ {
			if s := t.slots[i].Load(); s != nil && s.state.Load() == slotWaiting {
				return
			}
		}
		runtime.Gosched()
	}
}

// TestParkedCallerGetsItsAnswer: caller A reads the lane for its get;
// caller B's get, issued meanwhile, parks. Answered B first, A's read
// completes B's slot and sends it the news; answered A first, A gives the
// token back and B, woken, reads its own answer. Each gets its own bytes.
func TestParkedCallerGetsItsAnswer(t *testing.T) {
	for _, bFirst := range []bool{true, false} {
		w := newWorld(t, 2, 4096, nil)
		sp := newScriptedPeer(t)
		p := w.nodes[0].Path(1, sp.ln.Addr().String()).(*path)
		a, b := make([]byte, 8), make([]byte, 16)
		resA, resB := make(chan error, 1), make(chan error, 1)
		go func() { resA <- p.Get(a, 0) }()
		reqA := <-sp.reqs
		c := <-sp.conn
		sp.conn <- c // for the cleanup
		go func() { resB <- p.Get(b, 64) }()
		reqB := <-sp.reqs
		waitParked(p.lanes[small])
		first, second := reqA, reqB
		firstRes, secondRes := resA, resB
		fill := [2]byte{0xaa, 0xbb}
		if bFirst {
			first, second, firstRes, secondRes = reqB, reqA, resB, resA
			fill = [2]byte{0xbb, 0xaa}
		}
		sp.answer(t, c, first, fill[0])
		if err := <-firstRes; err != nil {
			t.Fatalf("bFirst %v: the get answered first: %v", bFirst, err)
		}
		sp.answer(t, c, second, fill[1])
		if err := <-secondRes; err != nil {
			t.Fatalf("bFirst %v: the get answered second: %v", bFirst, err)
		}
		for i := range a {
			if a[i] != 0xaa {
				t.Fatalf("bFirst %v: A got %x", bFirst, a)
			}
		}
		for i := range b {
			if b[i] != 0xbb {
				t.Fatalf("bFirst %v: B got %x", bFirst, b)
			}
		}
	}
}

// TestParkedCallerEndsOnPeerFailure: a caller parked behind another's
// read, and that reader, both end with ErrPEFailed when the peer is
// declared failed.
func TestParkedCallerEndsOnPeerFailure(t *testing.T) {
	w := newWorld(t, 2, 4096, nil)
	sp := newScriptedPeer(t)
	p := w.nodes[0].Path(1, sp.ln.Addr().String()).(*path)
	resA, resB := make(chan error, 1), make(chan error, 1)
	go func() { resA <- p.Get(make([]byte, 8), 0) }()
	<-sp.reqs
	go func() { resB <- p.Get(make([]byte, 8), 8) }()
	<-sp.reqs
	waitParked(p.lanes[small])
	w.nodes[0].PeerFailed(1)
	wantPEFailed(t, <-resA, 1)
	wantPEFailed(t, <-resB, 1)
}

// TestParkedAtomicAnsweredAsTheLaneFails: a parked fetch-add whose answer
// arrives just before the connection is lost returns that answer's old
// value, whether its caller sees the news or the lane's failure first
// (which of the two it sees is the scheduler's choice; TestAbandonKeeps
// the answer pins the second).
func TestParkedAtomicAnsweredAsTheLaneFails(t *testing.T) {
	for round := range 5 {
		w := newWorld(t, 2, 4096, nil)
		sp := newScriptedPeer(t)
		p := w.nodes[0].Path(1, sp.ln.Addr().String()).(*path)
		resA := make(chan error, 1)
		type result struct {
			old uint64
			err error
		}
		resB := make(chan result, 1)
		go func() { resA <- p.Get(make([]byte, 8), 0) }()
		<-sp.reqs
		c := <-sp.conn
		sp.conn <- c
		go func() {
			old, err := p.Atomic(transport.AtomicFetchAdd, 8, 64, 1, 0)
			resB <- result{old, err}
		}()
		reqB := <-sp.reqs
		waitParked(p.lanes[small])
		resp := header{op: opAtomicResp, id: reqB.id, src: reqB.dst, dst: reqB.src, operand: 42}
		var b [headerSize]byte
		resp.encode(b[:])
		if _, err := c.Write(b[:]); err != nil {
			t.Fatal(err)
		}
		c.Close() // A, reading, completes B's slot, then finds the connection gone
		if r := <-resB; r.err != nil || r.old != 42 {
			t.Fatalf("round %d: answered fetch-add returned %d, %v; want 42, nil", round, r.old, r.err)
		}
		wantPEFailed(t, <-resA, 1)
	}
}

// TestAbandonKeepsTheAnswer: a caller that finds its lane failed but its
// slot completed (the answer came first) gets the answer, old value
// included, not the failure.
func TestAbandonKeepsTheAnswer(t *testing.T) {
	w := newWorld(t, 2, 4096, nil)
	p := w.path(0, 1).(*path)
	if err := p.Put(0, []byte{1}); err != nil { // connects the small lane
		t.Fatal(err)
	}
	l := p.lanes[small]
	l.mu.Lock()
	s, ok := l.acquireSlot()
	l.mu.Unlock()
	if !ok {
		t.Fatal("no slot")
	}
	s.old = 42
	s.state.Store(slotWaiting)
	s.state.Store(slotDone)
	s.done <- struct{}{} // the news a parked owner is sent
	l.fail(errs.ErrPEFailed, "test")
	if old, err := l.abandon(s, "Atomic"); err != nil || old != 42 {
		t.Fatalf("abandon of an answered request: %d, %v; want 42, nil", old, err)
	}
	select {
	case <-s.done:
		t.Fatal("the news was left in the slot")
	default:
	}
	if _, err := l.abandon(mustPending(t, l), "Atomic"); !errors.Is(err, errs.ErrPEFailed) {
		t.Fatalf("abandon of an unanswered request: %v, want ErrPEFailed", err)
	}
}

// mustPending returns a fresh pending slot of l.
func mustPending(t *testing.T, l *lane) *slot {
	l.mu.Lock()
	s, ok := l.acquireSlot()
	l.mu.Unlock()
	if !ok {
		t.Fatal("no slot")
	}
	s.state.Store(slotPending)
	return s
}
