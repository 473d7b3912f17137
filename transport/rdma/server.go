package rdma

import (
	"bufio"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/goshmem/shmem/internal/admit"
	"github.com/goshmem/shmem/transport"
)

// serverConn is one accepted connection: it applies the requests a peer
// sends to the local heap (or relays them) and writes the responses, in the
// order the requests came.
type serverConn struct {
	n        *Node
	raw      net.Conn // as the acceptor returned it
	tcp      net.Conn // the socket under raw (admit.Raw)
	admitted func()   // frees the connection's place among the unauthenticated
	c        net.Conn
	src      frameSource

	wmu sync.Mutex // guards bw, wdl and ob once shared: relayed answers come from other goroutines
	// shared is set by the loop before it relays its first request; until
	// then the loop alone writes, and takes no lock (two lock pairs per
	// answer, about 70 instructions). Once set it stays set, and the
	// goroutines answering relayed requests see it: it is written before
	// the relayed request is published.
	shared bool
	bw     *bufio.Writer
	wdl    int64 // write deadline set on c (clock ns)
	ob     [headerSize]byte
	rec    gatherer // under TLS: gathers a flush's records into few writes
	// oneWrite is the longest write rec's connection sends with one socket
	// write unheld (see lane.oneWrite).
	oneWrite int
	lw       *lowWater // without TLS: large payloads wake the reader once per chunk

	publish atomic.Uint32 // a private word whose atomic add orders a put's copy before Ring

	dirty   bool // responses buffered by the reader, flushed when input runs dry
	ringDue bool // a frame changed the heap; the bell rings once answers are out
	// ringLo, ringHi: the wire offsets the frames since the last ring
	// changed, at least; a ring wakes only waiters they may concern.
	ringLo, ringHi uint64
	relayFail      int // rank a relayed write could not reach, or -1; reported at the next relayed flush
}

func (sc *serverConn) serve() {
	n := sc.n
	defer n.wg.Done()
	defer n.dropServer(sc)
	defer sc.raw.Close()
	defer sc.admitted()
	if err := sc.handshake(); err != nil {
		n.acc.Refused("refused connection", "rank", n.cfg.Rank, "remote", sc.raw.RemoteAddr().String(), "reason", err)
		return
	}
	sc.admitted()
	if n.poll != nil && n.poll.servers != nil {
		if fd, ok := socketFD(sc.tcp); ok {
			n.poll.servers.add(fd)
			defer n.poll.servers.remove(fd) // before the deferred close
		}
	}
	if sc.rec == nil {
		sc.lw = newLowWater(sc.tcp)
	}
	sc.src = newFrameSource(sc.c)
	sc.bw = bufio.NewWriterSize(sc.c, 64<<10)
	if err := sc.loop(); err != nil {
		n.log.Warn("rdma: closing connection", "rank", n.cfg.Rank, "remote", sc.raw.RemoteAddr().String(), "reason", err)
	}
}

// handshake runs TLS and Authenticate under HandshakeTimeout, before any
// frame.
// Their writes go through an acceptedConn, which tells the acceptor that
// this side spoke, and Authenticate admits the connection once the client
// proved itself (see admitconn.go); the frames after it go straight to
// the socket.
func (sc *serverConn) handshake() error {
	cfg := &sc.n.cfg
	sc.tcp = admit.Raw(sc.raw)
	base := newBusyConn(sc.tcp, sc.n.poll)
	sc.c = &acceptedConn{Conn: base, owner: sc.raw, admitted: sc.admitted}
	sc.raw.SetDeadline(time.Now().Add(cfg.HandshakeTimeout))
	var tc *tls.Conn
	var rec *recordConn
	if cfg.ServerTLS != nil {
		rec = newRecordConn(sc.c, base)
		tc = tls.Server(rec, cfg.ServerTLS)
		if err := tc.Handshake(); err != nil {
			return err
		}
		sc.c = tc
	}
	if cfg.Authenticate != nil {
		if err := cfg.Authenticate(sc.c, true); err != nil {
			return err
		}
	}
	if tc == nil {
		sc.c = base
	} else {
		rec.Conn = base // spoken (TLS answered): writes need no more telling
		var err error
		if sc.c, sc.rec, err = sealTLS(tc, rec, false); err != nil {
			return err
		}
		sc.oneWrite = oneWriteOf(sc.rec)
	}
	return sc.raw.SetDeadline(time.Time{})
}

var errNotRequest = errors.New("response frame on an accepted connection")

// loop reads frames until the peer leaves (nil) or misbehaves (the reason).
// Every check happens before the frame touches memory. Frames are numbered
// in the order read, as the sender numbered them in the order written;
// ackPolicy decides when an opAck carries that number back.
func (sc *serverConn) loop() error {
	n := sc.n
	heap := n.cfg.Heap
	var h header
	var acks ackPolicy
	for {
		if err := readHeader(&sc.src, &h); err != nil {
			// A reset between frames is a peer leaving too: closing a
			// socket whose acks were never read (puts with no Quiet after
			// them) resets it instead of sending FIN.
			if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || errors.Is(err, syscall.ECONNRESET) {
				return nil
			}
			return err
		}
		if !h.isRequest() {
			return errNotRequest
		}
		asked := false
		if int(h.dst) != n.cfg.Rank {
			if err := sc.relay(&h); err != nil {
				return err
			}
		} else {
			wireOff, wireSig := h.off, h.cond // checkTarget makes them relative
			data, sig, err := h.checkTarget(heap[:n.usable()], n.cfg.Statics)
			if err != nil {
				return err
			}
			changed, err := sc.apply(&h, data, sig)
			if err != nil {
				return err
			}
			if changed {
				sc.changed(&h, wireOff, wireSig)
			}
			asked = h.flags&flagAck != 0
		}
		ack, flush := acks.frame(asked, sc.inputDry())
		if ack != 0 {
			r := header{op: opAck, src: uint32(n.cfg.Rank), dst: h.src, operand: ack}
			if err := sc.respond(&r, nil, false); err != nil {
				return err
			}
		}
		if sc.dirty && flush {
			if err := sc.flushOut(); err != nil {
				return err
			}
		}
		// Ringing may wake a thread (futex(2)), several microseconds on a
		// virtual machine: after the answers, so a sender waiting in Quiet
		// does not wait for it too.
		if sc.ringDue {
			sc.ring()
		}
	}
}

// changed records that h, addressed at wire offsets off and sigOff,
// changed the node's memory: the bell rings once the answers are out.
func (sc *serverConn) changed(h *header, off, sigOff uint64) {
	n := uint64(h.n)
	if h.op == opAtomic || h.op == opAtomicPost {
		n = uint64(h.width)
	}
	if !sc.ringDue {
		sc.ringDue, sc.ringLo, sc.ringHi = true, off, off
	}
	sc.ringLo, sc.ringHi = min(sc.ringLo, off), max(sc.ringHi, off+n)
	if h.op == opPutSignal {
		sc.ringLo, sc.ringHi = min(sc.ringLo, sigOff), max(sc.ringHi, sigOff+8)
	}
}

// ring wakes the node's waiters that the frames since the last ring may
// concern (a bell that tells them apart: transport.LocalBell.RingRange).
func (sc *serverConn) ring() {
	sc.ringDue = false
	n := sc.n
	switch {
	case n.ranger != nil:
		if n.ranger.RingRange(sc.ringLo, sc.ringHi) && n.yieldAfterRing {
			// The waiter this wakes (a PE in a barrier, say) runs now,
			// while the answer travels and the peer turns round,
			// instead of at the first yield of the next read's poll, a
			// few failed reads later, where it delays the read that
			// finds the peer's next request.
			runtime.Gosched()
		}
	case n.cfg.Bell != nil:
		n.cfg.Bell.Ring()
	}
}

// rangeRinger is a bell that wakes only the waiters a write of the heap
// bytes [lo, hi) may concern.
type rangeRinger interface{ RingRange(lo, hi uint64) bool }

// apply performs a checked request on the local memory checkTarget
// returned for its data and its signal, reporting whether it changed
// that memory.
func (sc *serverConn) apply(h *header, mem, sig []byte) (changed bool, err error) {
	switch h.op {
	case opPut, opPutSignal:
		if err := sc.readPayload(mem[h.off : h.off+uint64(h.n)]); err != nil {
			return false, err
		}
		if h.op == opPutSignal {
			transport.ApplySignal(sig, h.cond, h.operand, transport.SignalOp(h.aop))
		} else {
			// The copy is plain stores and Ring starts with a load: without
			// a full barrier between them a waiter arming meanwhile could
			// miss both the data and the ring (transport.Bell's contract).
			sc.publish.Add(1)
		}
	case opAtomic, opAtomicPost:
		old := transport.ApplyAtomic(mem, transport.AtomicOp(h.aop), int(h.width), h.off, h.operand, h.cond)
		if h.op == opAtomic {
			r := header{op: opAtomicResp, id: h.id, src: h.dst, dst: h.src, operand: old}
			if err := sc.respond(&r, nil, false); err != nil {
				return false, err
			}
		}
		if transport.AtomicOp(h.aop) == transport.AtomicFetch {
			return false, nil
		}
	case opGet:
		r := header{op: opGetResp, id: h.id, src: h.dst, dst: h.src, n: h.n}
		return false, sc.respond(&r, mem[h.off:h.off+uint64(h.n)], false)
	case opFlush:
		r := header{op: opFlushAck, id: h.id, src: h.dst, dst: h.src, operand: h.operand}
		return false, sc.respond(&r, nil, false)
	}
	return true, nil
}

// respond writes a response; now forces it onto the wire (answers relayed
// from another goroutine), otherwise the reader flushes when its input runs
// dry, so a burst of requests gets one write of answers.
func (sc *serverConn) respond(h *header, payload []byte, now bool) error {
	if sc.shared {
		sc.wmu.Lock()
		defer sc.wmu.Unlock()
	}
	if t, timeout := sc.n.clock.now(), sc.n.cfg.OpTimeout; sc.wdl-t < int64(timeout/2) {
		sc.wdl = t + int64(timeout)
		sc.c.SetWriteDeadline(time.Now().Add(timeout))
	}
	h.encode(sc.ob[:])
	if headerSize+len(payload) <= sc.bw.Available() {
		// The common answer stays in bw: no write to gather. (bw fails
		// these only with the error of an earlier flush, which ended
		// the connection already.)
		if _, err := sc.bw.Write(sc.ob[:]); err != nil {
			return err
		}
		sc.bw.Write(payload)
		if now {
			return sc.flushLocked()
		}
		sc.dirty = true
		return nil
	}
	if sc.rec != nil {
		// A large payload passes bw and goes to TLS at once: gather its
		// records.
		sc.rec.Hold()
	}
	_, err := sc.bw.Write(sc.ob[:])
	switch {
	case err != nil:
	case sc.rec != nil && len(payload) > sc.bw.Available():
		// Under TLS the header (and the answers before it) leave bw as a
		// record of their own and the payload is sealed straight from the
		// heap: through bw, its first 64 KiB were copied into bw, sealed
		// with the header, and on the reader's side copied again through
		// its bufio.Reader, a quarter of a 256 KiB chunk twice on each side.
		if err = sc.bw.Flush(); err == nil {
			_, err = sc.c.Write(payload)
		}
	default:
		_, err = sc.bw.Write(payload)
	}
	if now && err == nil {
		err = sc.bw.Flush()
	}
	if sc.rec != nil {
		err = sc.rec.Release(err)
	}
	if err == nil && !now {
		sc.dirty = true
	}
	return err
}

func (sc *serverConn) flushOut() error {
	if sc.shared {
		sc.wmu.Lock()
		defer sc.wmu.Unlock()
	}
	sc.dirty = false
	return sc.flushLocked()
}

// flushLocked writes the buffered responses, one write of bw; the caller
// holds wmu.
func (sc *serverConn) flushLocked() error {
	if sc.rec == nil || sc.bw.Buffered() <= sc.oneWrite {
		return sc.bw.Flush()
	}
	sc.rec.Hold()
	return sc.rec.Release(sc.bw.Flush())
}

// inputDry reports whether no more input is buffered (in a sealed
// connection: opened or not).
func (sc *serverConn) inputDry() bool { return sc.src.buffered() == 0 }

// usable is how many bytes of the heap frames may address now.
func (n *Node) usable() int {
	if n.cfg.Usable != nil {
		return int(min(n.cfg.Usable(), int64(len(n.cfg.Heap))))
	}
	return len(n.cfg.Heap)
}
