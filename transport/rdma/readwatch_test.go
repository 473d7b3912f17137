package rdma

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/goshmem/shmem/internal/errs"
)

// The watch's decisions, with fire called at chosen instants (the real
// timer is set an hour ahead, so it never runs during the test).
func TestReadWatchDecides(t *testing.T) {
	expired := 0
	clk := newClock()
	w := newReadWatch(clk, func() { expired++ })
	defer w.close()
	base := clk.now() + int64(time.Hour)
	at := func(d time.Duration) int64 { return base + int64(d) }

	w.start(at(0))
	if armedAt(w) != at(0) {
		t.Fatalf("first read: timer at %d, want its deadline", armedAt(w))
	}
	w.stop()
	w.start(at(time.Second)) // a later read: the armed timer stays
	if armedAt(w) != at(0) {
		t.Fatalf("later read moved the timer to %d", armedAt(w))
	}
	w.fire(at(0)) // fires for the first read, finds the second
	if expired != 0 || armedAt(w) != at(time.Second) {
		t.Fatalf("fire before the read's deadline: expired %d, timer at %d, want 0 and re-armed for it", expired, armedAt(w))
	}
	w.fire(at(time.Second))
	if expired != 1 || armedAt(w) != 0 {
		t.Fatalf("fire at the read's deadline: expired %d, timer at %d, want 1 and disarmed", expired, armedAt(w))
	}

	w.start(at(2 * time.Second))
	w.stop()
	w.fire(at(3 * time.Second)) // nobody reads: no expiry, disarmed
	if expired != 1 || armedAt(w) != 0 {
		t.Fatalf("fire with no read: expired %d, timer at %d", expired, armedAt(w))
	}
	w.start(at(5 * time.Second))
	w.stop()
	w.start(at(4 * time.Second)) // an earlier deadline (a caller that waited for the token) re-arms sooner
	if armedAt(w) != at(4*time.Second) {
		t.Fatalf("earlier deadline: timer at %d, want it", armedAt(w))
	}
	w.close()
	w.start(at(6 * time.Second))
	w.fire(at(7 * time.Second))
	if expired != 1 || armedAt(w) != 0 {
		t.Fatalf("closed watch: expired %d, timer at %d", expired, armedAt(w))
	}
}

// armedAt reads when w's timer fires (0: not armed).
func armedAt(w *readWatch) int64 { return w.at.Load() }

// TestOpTimeoutAfterAnswers: a peer that answers a get and then goes
// silent fails the next get with ErrTimeout, though the watch's timer was
// armed by the first read (it fires early, finds the second read and waits
// for its deadline).
func TestOpTimeoutAfterAnswers(t *testing.T) {
	w := newWorld(t, 2, 4096, func(c *Config) { c.OpTimeout = 300 * time.Millisecond })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		var hb [headerSize]byte
		if _, err := io.ReadFull(c, hb[:]); err != nil {
			return
		}
		req, err := decodeHeader(hb[:])
		if err != nil {
			return
		}
		resp := header{op: opGetResp, id: req.id, src: req.dst, dst: req.src, n: req.n}
		resp.encode(hb[:])
		c.Write(append(hb[:], make([]byte, req.n)...))
		io.Copy(io.Discard, c) // then silence, until the lane closes
	}()
	p := w.nodes[0].Path(1, ln.Addr().String())
	if err := p.Get(make([]byte, 8), 0); err != nil {
		t.Fatalf("answered get: %v", err)
	}
	if err := p.Get(make([]byte, 8), 0); !errors.Is(err, errs.ErrTimeout) {
		t.Fatalf("unanswered get: %v, want ErrTimeout", err)
	}
	<-done
}
