package rdma

import (
	"errors"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
)

var errNoRequest = errors.New("response matches no pending request")

// readLoop is the lane's reader goroutine. It reads only while requests
// that no caller waits for (relayed, GetNBI, or requests queued behind a
// full slot table) are pending, or while unread acks pile up; otherwise
// waiting callers read their own responses. Because the peer answers a
// connection's frames in order, an ack read by anyone proves every earlier
// response was handled.
func (l *lane) readLoop() {
	defer l.p.n.wg.Done()
	for {
		select {
		case <-l.wake:
		case <-l.dead:
			l.quiesceRelays()
			return
		}
		for l.orphans.Load() > 0 || l.backlogged() {
			if !l.rtok.take(l.dead) {
				l.quiesceRelays()
				return
			}
			ok := l.readOne()
			l.rtok.release()
			if !ok {
				l.quiesceRelays()
				return
			}
		}
	}
}

// quiesceRelays answers the relayed requests of a dead lane once nobody is
// reading into their buffers any more.
func (l *lane) quiesceRelays() {
	l.rtok.take(nil)
	l.failRelays()
	l.rtok.release()
}

// quiesce returns once no reader is filling a buffer of the dead lane, so a
// failed Get's caller owns its buffer again. (Later holders read nothing:
// readOne checks the lane first.)
func (l *lane) quiesce() {
	l.rtok.take(nil)
	l.rtok.release()
}

// backlogged reports whether the reader goroutine should drain acks
// (see the function backlogged).
func (l *lane) backlogged() bool {
	return backlogged(l.written.Load(), l.acked.Load(), l.autoAck)
}

// wakeReader tells the reader goroutine that orphans rose.
func (l *lane) wakeReader() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// readFor reads frames, holding the read token (which it returns), until
// s completes or the lane fails; it reports whether s completed. s's
// deadline bounds the wait.
func (l *lane) readFor(s *slot) bool {
	if s.state.Load() != slotDone && !l.deadNow() {
		l.rwatch.start(s.deadline)
		l.callerReads(true)
		for s.state.Load() != slotDone && l.readOne() {
		}
		l.callerReads(false)
		l.rwatch.stop()
	}
	l.rtok.release()
	return s.state.Load() == slotDone
}

// callerReads marks the reads that follow as a caller's (on) or the
// reader goroutine's: a locked caller polls differently (busyConn.locked).
// The read token's holder calls it.
func (l *lane) callerReads(on bool) {
	if l.locked != nil {
		l.locked.locked = on
	}
}

// readUntilAcked reads frames, holding the read token (which it returns),
// until the peer has acknowledged frame mark or the lane fails; it reports
// whether mark was acknowledged. deadline (clock ns) bounds the wait.
func (l *lane) readUntilAcked(mark uint64, deadline int64) bool {
	if l.acked.Load() < mark && !l.deadNow() {
		l.rwatch.start(deadline)
		l.callerReads(true)
		for l.acked.Load() < mark && l.readOne() {
		}
		l.callerReads(false)
		l.rwatch.stop()
	}
	l.rtok.release()
	return l.acked.Load() >= mark
}

// readOne reads, checks and completes one response; the caller holds the
// read token. It reports false once the lane has failed, and reads
// nothing from a failed lane: a caller that gave up on it owns its
// buffer again once the token's holder at the failure is done.
func (l *lane) readOne() bool {
	if l.deadNow() {
		return false
	}
	n := l.p.n
	var h header
	if err := readHeader(&l.src, &h); err != nil {
		if _, bad := err.(frameError); bad {
			n.log.Warn("rdma: closing connection", "rank", n.cfg.Rank, "peer", l.p.peer, "addr", l.addr, "reason", err)
			l.fail(errs.ErrPEFailed, "connection to %s: %v", l.addr, err)
		} else {
			l.fail(errs.ErrPEFailed, "connection to %s lost: %v", l.addr, err)
		}
		return false
	}
	s, err := l.match(&h)
	if err == nil && h.status == statusOK && h.op == opGetResp {
		err = l.src.readFull(s.dst)
	}
	if err != nil {
		n.log.Warn("rdma: closing connection", "rank", n.cfg.Rank, "peer", l.p.peer, "addr", l.addr, "reason", err)
		l.fail(errs.ErrPEFailed, "connection to %s: %v", l.addr, err)
		return false
	}
	if s != nil {
		l.complete(s, &h)
	}
	return true
}

// match finds the slot of a decoded response header, checking everything
// about it before the payload is read. An unsolicited ack has no slot.
func (l *lane) match(h *header) (*slot, error) {
	if h.isRequest() {
		return nil, errors.New("request on a dialled connection")
	}
	if h.op == opAck {
		if h.status != statusOK {
			return nil, errors.New("ack with a failure status")
		}
		return nil, l.ack(h.operand, true)
	}
	s := l.slots.lookup(h.id)
	if s == nil || s.want != h.op {
		return nil, errNoRequest
	}
	switch {
	case h.status != statusOK:
		if h.operand >= uint64(l.p.n.cfg.NPEs) {
			return nil, errors.New("failure status names no PE")
		}
		s.fail = int(h.operand)
	case h.op == opGetResp:
		if int(h.n) != len(s.dst) {
			return nil, errors.New("get response length differs from the request")
		}
	case h.op == opAtomicResp:
		s.old = h.operand
	case h.op == opFlushAck:
		if err := l.ack(h.operand, false); err != nil {
			return nil, err
		}
		s.old = h.operand
	}
	return s, nil
}

// ack records that the peer has applied the lane's frames up to seq
// (see onAck); unsolicited says it came as an opAck.
func (l *lane) ack(seq uint64, unsolicited bool) error {
	sent := l.sent.Load()
	for {
		a := l.acked.Load()
		n, err := onAck(sent, a, seq, unsolicited, l.autoAck)
		if err != nil || n == a || l.acked.CompareAndSwap(a, n) {
			return err
		}
	}
}

// complete hands a finished slot to whoever owns it.
func (l *lane) complete(s *slot, h *header) {
	switch {
	case s.relay != nil:
		if s.state.CompareAndSwap(slotPending, slotClaimed) {
			l.orphans.Add(-1)
			s.relay.relayResponse(s, h)
			l.slots.releaseBuf(s, l.p.n)
		}
	case s.detached:
		if s.fail >= 0 {
			l.nbiFail.Store(int64(s.fail))
		} else if s.want == opAtomicResp {
			transport.PutWord(s.dst, len(s.dst), s.old) // AtomicNBI's fetched value
		}
		l.orphans.Add(-1)
		l.slots.release(s)
	default:
		// The owner finds slotDone in its slot; only one parked in
		// slotWaiting needs the news. Sent before the token is released,
		// so whoever takes it next finds the news already there.
		if s.state.Swap(slotDone) == slotWaiting {
			s.done <- struct{}{}
		}
	}
}

// failRelays answers, with a failure naming this lane's peer, every relayed
// request still waiting on the lane, so the PEs behind the relay see the
// failure instead of a timeout.
func (l *lane) failRelays() {
	l.mu.Lock() // no relay request is being issued meanwhile
	defer l.mu.Unlock()
	t := l.slots
	for i := 0; i < int(t.n.Load()); i++ {
		s := t.slots[i].Load()
		if s == nil || s.state.Load() != slotPending || s.relay == nil ||
			!s.state.CompareAndSwap(slotPending, slotClaimed) {
			continue
		}
		l.orphans.Add(-1)
		s.fail = l.p.peer
		h := header{op: s.want}
		s.relay.relayResponse(s, &h)
		t.releaseBuf(s, l.p.n)
	}
}
