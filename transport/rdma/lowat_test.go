package rdma

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"
)

// A large payload that trickles in must still be applied whole: the
// low-water mark never asks for more than the sender still owes, so no
// read waits for bytes that will not come.
func TestLargePayloadTrickling(t *testing.T) {
	const size = 200 << 10
	w := newWorld(t, 2, size, nil)
	c, err := net.Dial("tcp", w.nodes[1].Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	want := pattern(size, 9)
	f := frame(header{op: opPut, dst: 1}, want)
	f = append(f, frame(header{op: opFlush, dst: 1, id: 1}, nil)...)
	// Pieces of a few kilobytes, each a separate segment, some of them
	// only after the server has had time to park on the rest.
	for len(f) > 0 {
		n := min(len(f), 3001)
		if _, err := c.Write(f[:n]); err != nil {
			t.Fatal(err)
		}
		f = f[n:]
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var ack [headerSize]byte
	if _, err := io.ReadFull(c, ack[:]); err != nil || ack[3] != opFlushAck {
		t.Fatalf("no flush ack: %v", err)
	}
	if !bytes.Equal(w.heaps[1], want) {
		t.Fatal("the heap does not hold the payload")
	}
}

// fit never sets a mark above what is still missing, and returns to 1.
func TestLowWaterFit(t *testing.T) {
	a, b := tcpPair(t)
	defer a.Close()
	defer b.Close()
	lw := newLowWater(a)
	if lw == nil {
		t.Fatal("no low-water mark on a TCP connection")
	}
	for _, tc := range []struct{ rem, want int }{
		{1 << 20, lowWaterMax}, {lowWaterMax, lowWaterMax}, {lowWaterMin, lowWaterMin},
		{lowWaterMin - 1, 1}, {100 << 10, 100 << 10}, {0, 1},
	} {
		lw.fit(tc.rem)
		if lw.err != nil {
			t.Fatalf("setsockopt: %v", lw.err)
		}
		if lw.cur != tc.want {
			t.Fatalf("fit(%d) set %d, want %d", tc.rem, lw.cur, tc.want)
		}
	}
	if newLowWater(&net.UnixConn{}) != nil {
		t.Fatal("a low-water mark on a connection that is not TCP")
	}
}
