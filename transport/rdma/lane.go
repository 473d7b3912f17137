package rdma

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/internal/netprobe"
	"github.com/goshmem/shmem/internal/secure"
)

// A lane is one dialled connection of a path: requests go out on it and
// responses come back on it, in order. Each path has a small lane and a bulk
// lane. A lane connects on first use; once connected, losing it is final:
// the writes it carried may be lost, so the peer counts as failed.
type lane struct {
	p       *path
	bulk    bool
	autoAck bool // the peer acknowledges counted frames unasked (flagAck)
	addr    string

	mu   sync.Mutex // serialises connect and every write
	conn net.Conn   // guarded by mu; nil until connected
	wdl  int64      // write deadline currently set on conn (clock ns)
	wbuf []byte     // header plus small payloads, so a frame is one write
	rec  gatherer   // under TLS: gathers a frame's records into few writes
	// oneWrite is the longest write rec's connection sends with one socket
	// write unheld; longer single writes are held.
	oneWrite int

	slots *slotTable // set once by connect, before the reader starts

	// The read side. Whoever holds the token reads the socket: a caller
	// waiting for its own response (no goroutine hand-off on the common
	// path), or the lane's reader goroutine while requests nobody waits for
	// (relayed, GetNBI) are pending. src belongs to the holder.
	rtok    readToken
	src     frameSource
	locked  *busyConn     // the socket under src when callers are locked (Config.LockedCallers); see callerReads
	orphans atomic.Int32  // pending relayed and detached requests, and pipelined gets issuing more
	wake    chan struct{} // tells the reader goroutine that orphans rose
	rwatch  *readWatch    // fails the lane when a reading caller waits too long
	tries   int           // dials so far; guarded by mu

	// Frames are numbered on a lane in the order written (sent counts
	// them); the peer applies them in that order, so one number says how
	// far it got. A direct lane's counted frames carry flagAck and the peer
	// acknowledges them unasked (opAck); a relayed lane's are confirmed by
	// flushes, since a relay's ack would prove only forwarding. What to do
	// with these counters is decided by the pure functions of ackproto.go.
	sent      atomic.Uint64 // frames written; bumped before the write so no ack can outrun it
	written   atomic.Uint64 // number of the last frame that completes only when acknowledged
	acked     atomic.Uint64 // highest frame number the peer has confirmed applied
	fenceMark atomic.Uint64 // frame number that later frames on the other lane must wait for
	nbiFail   atomic.Int64  // rank a relay reported failed under a GetNBI, or -1

	// deadFlag is set (after failErr) when the lane fails: the hot path's
	// check, one load, where a receive from a closed channel costs a
	// select.
	deadFlag atomic.Bool

	stMu    sync.Mutex // guards the fields below
	raw     net.Conn
	isDead  bool
	failErr error // sentinel
	failMsg string
	dead    chan struct{} // closed by fail
}

func newLane(p *path, bulk bool, addr string) *lane {
	l := &lane{p: p, bulk: bulk, autoAck: p.via < 0 && !bulk, addr: addr, dead: make(chan struct{}),
		wake: make(chan struct{}, 1)}
	l.rtok.freed = make(chan struct{}, 1)
	l.rwatch = newReadWatch(p.n.clock, func() {
		l.fail(errs.ErrTimeout, "no response from %s within %v", l.addr, l.p.n.cfg.OpTimeout)
	})
	l.wbuf = make([]byte, headerSize+p.n.cfg.SmallMax)
	l.nbiFail.Store(-1)
	return l
}

// errFor is the error an operation gets from a failed lane.
func (l *lane) errFor(op string) error {
	l.stMu.Lock()
	defer l.stMu.Unlock()
	return errs.New(op, l.p.n.cfg.Rank, l.p.peer, l.failErr, "%s", l.failMsg)
}

// fail marks the lane dead for good, closes its socket (which ends the
// reader) and wakes every waiter. The first failure's reason wins.
func (l *lane) fail(sentinel error, detail string, args ...any) {
	l.stMu.Lock()
	if l.isDead {
		l.stMu.Unlock()
		return
	}
	l.isDead = true
	l.failErr, l.failMsg = sentinel, fmt.Sprintf(detail, args...)
	l.deadFlag.Store(true)
	close(l.dead)
	l.rwatch.close()
	if l.raw != nil {
		l.raw.Close() // the raw socket: a TLS close would try to write
	}
	msg := l.failMsg
	l.stMu.Unlock()
	switch n := l.p.n; {
	case sentinel == errs.ErrFinalized:
	case n.leaving.Load():
		n.log.Debug("rdma: lane ended while finalizing", "rank", n.cfg.Rank, "peer", l.p.peer, "bulk", l.bulk, "reason", msg)
	default:
		n.log.Warn("rdma: lane failed", "rank", n.cfg.Rank, "peer", l.p.peer, "bulk", l.bulk, "reason", msg)
	}
}

// deadNow reports whether the lane has failed.
func (l *lane) deadNow() bool { return l.deadFlag.Load() }

// ready makes sure the lane is connected; the caller holds mu. A failed dial
// leaves the lane usable so that an op issued before the peer listens can be
// retried; a failed handshake too. A lane failure (PeerFailed, Close) ends a
// dial or handshake in progress at once: towards a host that vanished
// without a reset they would otherwise hold the caller for OpTimeout after
// the peer was declared failed. A connection the peer's listener shed
// under a flood of strangers (see admitconn.go) is dialled again, within
// OpTimeout.
func (l *lane) ready(op string) error {
	if l.deadNow() {
		return l.errFor(op)
	}
	if l.conn != nil {
		return nil
	}
	n := l.p.n
	if l.tries++; l.tries > 1 {
		n.redials.Add(1)
	}
	deadline := time.Now().Add(n.cfg.OpTimeout)
	var pause time.Duration
	for {
		shed, err := l.connect(op, deadline)
		if !shed {
			return err
		}
		// Dial again, a little later each time: the strangers that
		// pushed this connection out are still arriving.
		pause = min(max(2*pause, time.Millisecond), 100*time.Millisecond)
		if time.Until(deadline) < pause {
			return err
		}
		t := time.NewTimer(pause)
		select {
		case <-l.dead:
			t.Stop()
			return l.errFor(op)
		case <-t.C:
		}
		n.redials.Add(1)
	}
}

// connect dials the lane's address and runs the handshake, all by
// deadline. shed reports a handshake the peer's listener cut while the
// listener lives on (it answered admit.Busy, or closed or reset the
// connection and still accepts): err then says so, and the caller may
// dial again.
func (l *lane) connect(op string, deadline time.Time) (shed bool, err error) {
	n := l.p.n
	raw, err := l.dial(time.Until(deadline))
	if err != nil {
		if l.deadNow() {
			return false, l.errFor(op)
		}
		return false, errs.New(op, n.cfg.Rank, l.p.peer, errs.ErrPEFailed, "dial %s: %v", l.addr, err)
	}
	l.stMu.Lock()
	if l.isDead {
		l.stMu.Unlock()
		raw.Close()
		return false, l.errFor(op)
	}
	l.raw = raw // from here fail closes it, which ends the handshake
	l.stMu.Unlock()
	conn := newBusyConn(raw, n.poll)
	if n.cfg.LockedCallers {
		l.locked, _ = conn.(*busyConn)
	}
	raw.SetDeadline(deadline)
	head := &headConn{Conn: conn} // the handshake's reads, for admit.Busy
	failed := func(what string, err error) (bool, error) {
		if l.shed(head, err) {
			why := "turned this PE away as busy (too many connections waiting to authenticate there)"
			if !head.busy() {
				why = "cut the handshake and still accepts (shed under a flood of connections, or refused without a word)"
			}
			return !l.deadNow(), l.dropRaw(raw, op, errs.New(op, n.cfg.Rank, l.p.peer, errs.ErrTimeout,
				"%s with %s: its data listener %s until the %v bound: %v", what, l.addr, why, n.cfg.OpTimeout, err))
		}
		return false, l.dropRaw(raw, op, l.handshakeErr(op, what, err))
	}
	var tc *tls.Conn
	var rec *recordConn
	hs := net.Conn(head)
	if n.cfg.ClientTLS != nil {
		rec = newRecordConn(conn, head)
		tc = tls.Client(rec, n.cfg.ClientTLS)
		if err := tc.Handshake(); err != nil {
			return failed("TLS handshake", err)
		}
		hs = tc
	}
	if n.cfg.Authenticate != nil {
		if err := n.cfg.Authenticate(hs, false); err != nil {
			return failed("authenticating", err)
		}
	}
	if tc != nil {
		var err error
		if hs, l.rec, err = sealTLS(tc, rec, true); err != nil {
			return failed("switching to sealed records", err)
		}
		l.oneWrite = oneWriteOf(l.rec)
	} else {
		hs = conn
	}
	raw.SetDeadline(time.Time{})
	l.stMu.Lock()
	if l.isDead {
		l.stMu.Unlock()
		return false, l.errFor(op)
	}
	l.slots = newSlotTable(n.cfg.MaxOutstanding)
	l.src = newFrameSource(hs)
	n.wg.Add(1)
	l.stMu.Unlock()
	l.conn = hs
	n.connects.Add(1)
	go l.readLoop()
	return false, nil
}

// shed reports whether the handshake that failed with err, whose reads
// head kept, was cut by a listener that lives on: it answered admit.Busy,
// or it closed or reset the connection without refusing this side's
// secret (secure.ErrRefused) and still accepts (a dead listener refuses:
// netprobe.ListenerGone). Under TLS a listener that sheds a connection
// after answering the ClientHello only closes it.
func (l *lane) shed(head *headConn, err error) bool {
	switch {
	case l.deadNow():
		return false
	case head.busy():
		return true
	case !head.cut() || errors.Is(err, secure.ErrRefused) || errors.Is(err, errs.ErrTimeout):
		return false
	}
	return !netprobe.ListenerGone(l.addr, gonePeerProbe)
}

// dial connects to the lane's address within timeout, or until the lane
// fails.
func (l *lane) dial(timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case <-l.dead:
			cancel()
		case <-stop:
		}
	}()
	var d net.Dialer
	return d.DialContext(ctx, "tcp", l.addr)
}

// dropRaw undoes a connection whose handshake failed, leaving the lane
// ready to dial again, and returns err, or the lane's failure if the
// handshake ended because the lane failed.
func (l *lane) dropRaw(raw net.Conn, op string, err error) error {
	raw.Close()
	l.stMu.Lock()
	dead := l.isDead
	if !dead {
		l.raw = nil
	}
	l.stMu.Unlock()
	if dead {
		return l.errFor(op)
	}
	return err
}

// writeLocked writes one frame; the caller holds mu and has called ready.
// A counted frame (a put, posted atomic, signal or detached get) completes
// only once acknowledged: Quiet and Fence wait for it. now is the clock's
// reading for this frame (the caller's one read per operation).
func (l *lane) writeLocked(h *header, payload []byte, counted bool, op string, now int64) error {
	if l.bulk {
		h.flags |= flagBulk
	}
	if askAck(counted, l.autoAck) {
		h.flags |= flagAck
	}
	if h.op != opGet { // a get request's n is the length asked for
		h.n = uint32(len(payload))
	}
	h.encode(l.wbuf)
	if timeout := l.p.n.cfg.OpTimeout; l.wdl-now < int64(timeout/2) {
		l.wdl = now + int64(timeout)
		l.conn.SetWriteDeadline(time.Now().Add(timeout))
	}
	seq := l.sent.Add(1)
	var err error
	if headerSize+len(payload) <= len(l.wbuf) {
		// One write: a sealed connection seals it and writes it at once,
		// so it needs no hold; crypto/tls splits a write into 16 KiB
		// records, each written on its own unless held.
		copy(l.wbuf[headerSize:], payload)
		frame := l.wbuf[:headerSize+len(payload)]
		if l.rec != nil && len(frame) > l.oneWrite {
			l.rec.Hold()
			_, err = l.conn.Write(frame)
			err = l.rec.Release(err)
		} else {
			_, err = l.conn.Write(frame)
		}
	} else {
		// Two writes, not one writev: the payload is at least SmallMax, so
		// the extra syscall is noise, and the race detector models write(2)
		// (not writev) as synchronisation between the two ends in one
		// process, which keeps -race tests of a whole world meaningful.
		if l.rec != nil {
			l.rec.Hold()
		}
		if _, err = l.conn.Write(l.wbuf[:headerSize]); err == nil {
			_, err = l.conn.Write(payload)
		}
		if l.rec != nil {
			err = l.rec.Release(err)
		}
	}
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			l.fail(errs.ErrTimeout, "write to %s stalled for %v", l.addr, l.p.n.cfg.OpTimeout)
		} else {
			l.fail(errs.ErrPEFailed, "write to %s: %v", l.addr, err)
		}
		return l.errFor(op)
	}
	if counted {
		w, wake := afterCounted(l.acked.Load(), seq, l.autoAck)
		l.written.Store(w)
		if wake {
			l.wakeReader() // nobody may read the acks; their bytes must not fill the socket
		}
	}
	return nil
}

// send writes a frame that needs no response. counted frames (puts, posted
// atomics, signals) are complete only once a later flush is acknowledged.
func (l *lane) send(h *header, payload []byte, op string) error {
	l.mu.Lock()
	err := l.ready(op)
	if err == nil {
		err = l.writeLocked(h, payload, true, op, l.p.n.clock.now())
	}
	l.mu.Unlock()
	return err
}

// request writes a frame that expects a response and returns its slot. dst
// receives a get's data. A detached request (GetNBI) is released by the
// reader and counted like a put, so that Quiet's flush covers it. The
// response is due OpTimeout after the request is written.
func (l *lane) request(h *header, dst []byte, detached bool, op string) (*slot, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.ready(op); err != nil {
		return nil, err
	}
	s, ok := l.acquireSlot()
	if !ok {
		l.fail(errs.ErrTimeout, "%d requests unanswered for %v", l.p.n.cfg.MaxOutstanding, l.p.n.cfg.OpTimeout)
		return nil, l.errFor(op)
	}
	now := l.p.n.clock.now()
	s.want = responseOp(h.op)
	s.dst = dst
	s.detached = detached
	s.deadline = now + int64(l.p.n.cfg.OpTimeout)
	if h.op == opFlush {
		h.operand = l.written.Load()
	}
	h.id = s.id()
	s.state.Store(slotPending)
	if detached {
		l.orphans.Add(1)
	}
	if err := l.writeLocked(h, nil, detached, op, now); err != nil {
		return nil, err
	}
	if detached {
		l.wakeReader()
	}
	return s, nil
}

func responseOp(op uint8) uint8 {
	switch op {
	case opGet:
		return opGetResp
	case opAtomic:
		return opAtomicResp
	case opFlush:
		return opFlushAck
	}
	return 0
}

// await waits for s's response, releases s and returns the atomic's old
// value. The wait ends at s's deadline, whose expiry fails the lane, or
// when the lane fails. When nobody else is reading the lane, the caller
// reads the responses itself.
func (l *lane) await(s *slot, op string) (uint64, error) {
	// The common case first: nobody else reads the lane, so the caller
	// reads its own response, bounded by the read watch, and finds it in
	// its slot. Only a caller that must wait for another reader arms the
	// slot's timer and selects (about 1750 instructions a get or
	// fetch-add, half its client side's cost beyond the syscalls,
	// measured with callgrind).
	if s.state.Load() == slotDone || l.rtok.tryTake() && l.readFor(s) {
		return l.finish(s, op)
	}
	if l.deadNow() {
		return l.abandon(s, op)
	}
	return l.awaitParked(s, op)
}

// awaitParked is await for a caller that found the read side held: it
// waits for the completion news, for the token, for the lane's failure or
// for s's deadline.
func (l *lane) awaitParked(s *slot, op string) (uint64, error) {
	if !s.state.CompareAndSwap(slotPending, slotWaiting) {
		return l.finish(s, op) // completed meanwhile, without news
	}
	s.timer.Reset(time.Duration(s.deadline - l.p.n.clock.now()))
	defer s.timer.Stop()
	l.rtok.wait() // before the next try: see readToken
	defer l.rtok.unwait()
	for {
		if l.rtok.tryTake() {
			if !s.state.CompareAndSwap(slotWaiting, slotPending) {
				// Completed by the token's last holder, who sent the news
				// before giving the token back.
				<-s.done
				l.rtok.release()
				return l.finish(s, op)
			}
			if l.readFor(s) {
				return l.finish(s, op)
			}
			return l.abandon(s, op)
		}
		select {
		case <-s.done:
			return l.finish(s, op)
		case <-l.rtok.freed: // try again
		case <-l.dead:
			return l.abandon(s, op)
		case <-s.timer.C:
			l.fail(errs.ErrTimeout, "no response from %s within %v", l.addr, l.p.n.cfg.OpTimeout)
			return l.abandon(s, op)
		}
	}
}

// abandon is await's end on a failed lane: once no reader can fill s's
// buffer any more, s completed after all or the lane's error is returned.
// An abandoned slot is never released: the lane is dead.
func (l *lane) abandon(s *slot, op string) (uint64, error) {
	l.quiesce()
	if s.state.Load() == slotDone {
		select { // the news, if s was waiting when it completed
		case <-s.done:
		default:
		}
		return l.finish(s, op)
	}
	return 0, l.errFor(op)
}

// finish releases the completed s and reports its result.
func (l *lane) finish(s *slot, op string) (uint64, error) {
	old, failed := s.old, s.fail
	l.slots.release(s)
	if failed >= 0 {
		return 0, errs.New(op, l.p.n.cfg.Rank, failed, errs.ErrPEFailed, "relay towards PE %d reports PE %d failed", l.p.peer, failed)
	}
	return old, nil
}

// acquireSlot returns a free slot; the caller holds mu. While every slot is
// pending, the reader goroutine reads, since the caller itself cannot.
func (l *lane) acquireSlot() (*slot, bool) {
	if s := l.slots.tryAcquire(); s != nil {
		return s, true
	}
	l.orphans.Add(1)
	l.wakeReader()
	s, ok := l.slots.acquire(l.dead, l.p.n.cfg.OpTimeout)
	l.orphans.Add(-1)
	return s, ok
}

// call is request plus await.
func (l *lane) call(h *header, dst []byte, op string) (uint64, error) {
	s, err := l.request(h, dst, false, op)
	if err != nil {
		return 0, err
	}
	return l.await(s, op)
}

// flush makes everything written on the lane so far complete.
func (l *lane) flush(op string) error {
	h := l.p.header(opFlush)
	_, err := l.call(&h, nil, op)
	return err
}

// settle returns once the peer has applied the lane's frames up to mark.
// On a direct lane the peer's unsolicited ack is on its way: the caller
// reads it itself, or, while someone else holds the read side, falls back
// to a flush, whose answer that reader hands over.
func (l *lane) settle(mark uint64, op string) error {
	acked := l.acked.Load()
	// The read side is ours, if we take it, until readUntilAcked returns it.
	canRead := acked < mark && l.autoAck && l.rtok.tryTake()
	switch settleAction(acked, mark, l.autoAck, canRead) {
	case settleDone:
		return nil
	case settleFlush:
		return l.flush(op)
	}
	if !l.readUntilAcked(mark, l.p.n.clock.now()+int64(l.p.n.cfg.OpTimeout)) {
		return l.errFor(op)
	}
	return nil
}

// failErrOr returns the sentinel the lane failed with, or def while it lives.
func (l *lane) failErrOr(def error) error {
	l.stMu.Lock()
	defer l.stMu.Unlock()
	if l.failErr != nil {
		return l.failErr
	}
	return def
}
