package rdma

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"slices"
	"strings"
	"testing"
	"time"
)

// Quiet after a put on a direct lane waits for the peer's unsolicited ack:
// the put is the only frame the lane ever writes.
func TestQuietAfterPutSendsNothing(t *testing.T) {
	w := newWorld(t, 2, 4096, nil)
	p := w.path(0, 1)
	if err := p.Put(64, []byte{1, 2, 3, 4, 5, 6, 7, 8}); err != nil {
		t.Fatal(err)
	}
	if err := p.Engine().Quiet(); err != nil {
		t.Fatal(err)
	}
	if got := w.heaps[1][64:72]; !bytes.Equal(got, []byte{1, 2, 3, 4, 5, 6, 7, 8}) {
		t.Fatalf("after Quiet the target holds %v", got)
	}
	l := p.(*path).lanes[small]
	if sent, acked := l.sent.Load(), l.acked.Load(); sent != 1 || acked != 1 {
		t.Fatalf("lane wrote %d frames and saw %d acknowledged, want 1 and 1", sent, acked)
	}
}

// ackingPeer accepts one connection and acknowledges every frame it reads
// at once (a flush with its answer), through a send buffer of a few kilobytes: acks nobody reads
// stop it reading after a few dozen frames.
func ackingPeer(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	accepted := make(chan net.Conn, 1)
	go func() {
		defer close(done)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		accepted <- c
		c.(*net.TCPConn).SetWriteBuffer(2048)
		var hb [headerSize]byte
		for seq := uint64(1); ; seq++ {
			if _, err := io.ReadFull(c, hb[:]); err != nil {
				return
			}
			h, err := decodeHeader(hb[:])
			if err != nil || !h.isRequest() || h.op == opGet {
				return
			}
			if _, err := io.CopyN(io.Discard, c, int64(h.n)); err != nil {
				return
			}
			r := header{op: opAck, operand: seq}
			if h.op == opFlush {
				r = header{op: opFlushAck, id: h.id, operand: h.operand}
			}
			if _, err := c.Write(frame(r, nil)); err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		select {
		case c := <-accepted:
			c.Close()
		case <-done:
		}
		<-done
	})
	return ln.Addr().String()
}

// A long stream of puts with nobody waiting for acks must not stall: the
// lane's reader drains the acks, so the peer never blocks writing them
// (which would stop it reading, and then this side writing).
//
// The timeout only turns a stall into an error: the stream alone takes 2-4
// s under -race on a loaded 2-core machine (CI once failed at 5 s).
func TestPutStreamWithoutQuietDrainsAcks(t *testing.T) {
	w := newWorld(t, 2, 4096, func(c *Config) { c.OpTimeout = time.Minute })
	p := w.nodes[0].Path(1, ackingPeer(t))
	if err := p.Put(0, []byte{0}); err != nil { // connects the lane
		t.Fatal(err)
	}
	l := p.(*path).lanes[small]
	l.stMu.Lock()
	l.raw.(*net.TCPConn).SetReadBuffer(2048)
	l.stMu.Unlock()
	var b [8]byte
	for i := range 50000 {
		if err := p.Put(uint64(i%64)*8, b[:]); err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
	}
	if err := p.Engine().Quiet(); err != nil {
		t.Fatal(err)
	}
}

// A stream of puts with no Quiet between them loses no update.
func TestPutStreamWithoutQuiet(t *testing.T) {
	w := newWorld(t, 2, 4096, nil)
	p := w.path(0, 1)
	const puts = 20000
	var b [8]byte
	for i := 1; i <= puts; i++ {
		binary.LittleEndian.PutUint64(b[:], uint64(i))
		if err := p.Put(uint64(i%64)*8, b[:]); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Engine().Quiet(); err != nil {
		t.Fatal(err)
	}
	for slot := range 64 {
		last := puts - (puts-slot)%64 // the last i with i%64 == slot
		if got := binary.LittleEndian.Uint64(w.heaps[1][slot*8:]); got != uint64(last) {
			t.Fatalf("word %d = %d after Quiet, want %d", slot, got, last)
		}
	}
}

// An ack is checked like every response: one for a frame never written, or
// one on a relayed lane (where only the final target's flush answer
// proves anything), closes the lane, and the waiter gets ErrPEFailed.
func TestHostileAcksFailTheLane(t *testing.T) {
	for name, relayed := range map[string]bool{"beyond what was written": false, "on a relayed lane": true} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, 3, 4096, nil)
			addr, got := blackHole(t)
			p, peer := w.nodes[0].Path(1, addr), 1
			if relayed {
				p, peer = w.nodes[0].RelayPath(2, 1, addr), 2
			}
			if err := p.Put(0, []byte{1}); err != nil {
				t.Fatal(err)
			}
			c := <-got
			defer c.Close()
			if _, err := c.Write(frame(header{op: opAck, operand: 5}, nil)); err != nil {
				t.Fatal(err)
			}
			err := p.Engine().Quiet()
			wantPEFailed(t, err, peer)
			if !strings.Contains(err.Error(), "ack") {
				t.Fatalf("the error does not name the bad ack: %v", err)
			}
		})
	}
}

// A sender whose frames keep the target's input from running dry still
// gets acks: one every ackEvery frames, then one when the input runs dry.
func TestAckEveryUnderContinuousInput(t *testing.T) {
	n, err := Listen(Config{Rank: 1, NPEs: 2, Heap: make([]byte, 4096), Logger: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	cli, srv := net.Pipe()
	sc := &serverConn{n: n, raw: srv, c: srv, relayFail: -1, src: newFrameSource(srv), bw: bufio.NewWriter(srv)}
	done := make(chan error, 1)
	go func() { done <- sc.loop() }()
	const frames = 2*ackEvery + 44
	var burst []byte
	for i := range frames {
		burst = append(burst, frame(header{op: opPut, dst: 1, off: uint64(i%64) * 8, flags: flagAck}, make([]byte, 8))...)
	}
	go cli.Write(burst) // one write: the server reads it all before it runs dry
	var got []uint64
	var hb [headerSize]byte
	for len(got) == 0 || got[len(got)-1] < frames {
		if _, err := io.ReadFull(cli, hb[:]); err != nil {
			t.Fatal(err)
		}
		h, err := decodeHeader(hb[:])
		if err != nil || h.op != opAck {
			t.Fatalf("answer %+v, %v; want acks only", h, err)
		}
		got = append(got, h.operand)
	}
	if want := []uint64{ackEvery, 2 * ackEvery, frames}; !slices.Equal(got, want) {
		t.Fatalf("acks %v, want %v", got, want)
	}
	cli.Close()
	if err := <-done; err != nil {
		t.Fatalf("server loop: %v", err)
	}
}
