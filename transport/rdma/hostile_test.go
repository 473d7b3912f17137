package rdma

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/goshmem/shmem/transport"
)

func frame(h header, payload []byte) []byte {
	h.n = uint32(len(payload))
	if h.op == opGet {
		h.n = 8
	}
	b := make([]byte, headerSize, headerSize+len(payload))
	h.encode(b)
	return append(b, payload...)
}

// hostileFrames are frames a peer must never act on.
func hostileFrames(heap int) map[string][]byte {
	eight := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	badMagic := frame(header{op: opPut, dst: 1}, eight)
	badMagic[0] ^= 0xff
	reserved := frame(header{op: opPut, dst: 1}, eight)
	reserved[10] = 1
	huge := frame(header{op: opPut, dst: 1}, nil)
	binary.LittleEndian.PutUint32(huge[12:], MaxChunk+1)
	return map[string][]byte{
		"bad magic":         badMagic,
		"reserved byte":     reserved,
		"unknown op":        frame(header{op: 99, dst: 1}, nil),
		"length over limit": huge,
		"put overflows":     frame(header{op: opPut, dst: 1, off: 1<<64 - 4}, eight),
		"put past end":      frame(header{op: opPut, dst: 1, off: uint64(heap - 4)}, eight),
		"get past end":      frame(header{op: opGet, dst: 1, off: uint64(heap - 4)}, nil),
		"atomic width 3":    frame(header{op: opAtomic, dst: 1, width: 3, aop: 5}, nil),
		"atomic misaligned": frame(header{op: opAtomic, dst: 1, width: 8, aop: 5, off: 4}, nil),
		"atomic bad op":     frame(header{op: opAtomicPost, dst: 1, width: 8, aop: 200}, nil),
		"atomic past end":   frame(header{op: opAtomicPost, dst: 1, width: 8, aop: 2, off: uint64(heap)}, nil),
		"signal misaligned": frame(header{op: opPutSignal, dst: 1, aop: 1, cond: 3}, eight),
		"signal past end":   frame(header{op: opPutSignal, dst: 1, aop: 1, cond: uint64(heap)}, eight),
		"response frame":    frame(header{op: opGetResp, dst: 1}, eight),
		"unknown rank":      frame(header{op: opPut, dst: 99}, eight),
		"relay loop":        frame(header{op: opPut, dst: 0, hops: maxHops}, eight),
		// the statics region (hostileStatics bytes in the test's world)
		"statics put past end":    frame(header{op: opPut, dst: 1, off: transport.StaticsBase + hostileStatics - 4}, eight),
		"statics atomic past end": frame(header{op: opAtomicPost, dst: 1, width: 8, aop: 2, off: transport.StaticsBase + hostileStatics}, nil),
		"statics signal past end": frame(header{op: opPutSignal, dst: 1, aop: 1, cond: transport.StaticsBase + hostileStatics}, eight),
	}
}

// hostileStatics is the size of the statics region of the world
// TestHostileFramesCloseConnection sends hostileFrames to.
const hostileStatics = 512

func TestHostileFramesCloseConnection(t *testing.T) {
	const heapSize = 4096
	var statics []byte
	w := newWorld(t, 2, heapSize, func(c *Config) {
		statics = pattern(hostileStatics, 9)
		c.Statics = statics
	})
	copy(w.heaps[1], pattern(heapSize, 42))
	want := pattern(heapSize, 42)
	for name, f := range hostileFrames(heapSize) {
		c, err := net.Dial("tcp", w.nodes[1].Addr())
		if err != nil {
			t.Fatal(err)
		}
		// A valid put first proves the connection works until the bad frame.
		// Its flush ack, read below, orders the put before our heap check.
		ok := frame(header{op: opPut, dst: 1, off: 0}, want[:8])
		ok = append(ok, frame(header{op: opFlush, dst: 1}, nil)...)
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		c.Write(ok)
		var ack [headerSize]byte
		if _, err := io.ReadFull(c, ack[:]); err != nil || ack[3] != opFlushAck {
			t.Fatalf("%s: no flush ack: %v", name, err)
		}
		c.Write(f)
		_, err = io.Copy(io.Discard, c)
		c.Close()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("%s: connection left open", name)
		}
		if !bytes.Equal(w.heaps[1], want) {
			t.Fatalf("%s: heap changed", name)
		}
		if !bytes.Equal(statics, pattern(hostileStatics, 9)) {
			t.Fatalf("%s: statics changed", name)
		}
	}
}

func FuzzDecodeHeader(f *testing.F) {
	for _, b := range hostileFrames(4096) {
		f.Add(b[:headerSize])
	}
	for _, h := range []header{
		{op: opPut, n: 8, off: 64}, {op: opGet, n: 8}, {op: opAtomic, width: 8, aop: 3, off: 8, operand: 1, cond: 2},
		{op: opPutSignal, aop: 2, n: 4, cond: 16, operand: 5}, {op: opFlush, operand: 3},
		{op: opGetResp, n: 8, id: 1 << 33}, {op: opAtomicResp, operand: 9}, {op: opFlushAck, operand: 3},
		{op: opFlushAck, status: statusFailed, operand: 2}, {op: opPut, hops: 2, flags: flagBulk, dst: 3},
		{op: opAck, operand: 7}, {op: opPut, n: 8, flags: flagAck | flagBulk}, {op: opAtomicPost, width: 4, aop: 3, flags: flagAck},
	} {
		b := make([]byte, headerSize)
		h.encode(b)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := decodeHeader(b)
		if err != nil {
			return
		}
		out := make([]byte, headerSize)
		h.encode(out)
		if !bytes.Equal(out, b[:headerSize]) {
			t.Fatalf("accepted header does not re-encode to itself:\n%x\n%x", b[:headerSize], out)
		}
		ranged := h.op == opPut || h.op == opGet || h.op == opPutSignal
		if off, n := h.off, h.n; ranged {
			if _, _, err := h.checkTarget(make([]byte, 4096), make([]byte, 512)); err == nil {
				size, at := uint64(4096), off
				if off >= transport.StaticsBase {
					size, at = 512, off-transport.StaticsBase
				}
				if end := at + uint64(n); end > size || end < at || h.off != at {
					t.Fatalf("range check passed for off %#x n %d (made %#x)", off, n, h.off)
				}
			}
		}
	})
}

// FuzzServe feeds arbitrary bytes to an accepted connection's frame loop:
// it must neither panic nor hang, whatever it is sent.
func FuzzServe(f *testing.F) {
	for _, b := range hostileFrames(4096) {
		f.Add(b)
	}
	f.Add(append(frame(header{op: opPut, dst: 1, off: 8}, []byte{1, 2}), frame(header{op: opFlush, dst: 1}, nil)...))
	f.Add(frame(header{op: opGet, dst: 2, off: 8}, nil))
	f.Add(append(frame(header{op: opPut, dst: 1, off: 8, flags: flagAck}, []byte{1, 2}), frame(header{op: opAck, dst: 1}, nil)...))
	n, err := Listen(Config{Rank: 1, NPEs: 3, Heap: make([]byte, 4096), Logger: quietLog(), OpTimeout: time.Second})
	if err != nil {
		f.Fatal(err)
	}
	defer n.Close()
	f.Fuzz(func(t *testing.T, b []byte) {
		cli, srv := net.Pipe()
		sc := &serverConn{n: n, raw: srv, c: srv, relayFail: -1, src: newFrameSource(srv), bw: bufio.NewWriter(srv)}
		drained := make(chan struct{})
		go func() { io.Copy(io.Discard, cli); close(drained) }()
		go func() { cli.Write(b); cli.Close() }()
		sc.loop()
		srv.Close()
		<-drained
	})
}
