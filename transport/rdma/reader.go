package rdma

import (
	"errors"
	"io"
	"time"

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
			select {
			case <-l.rtok:
			case <-l.dead:
				l.quiesceRelays()
				return
			}
			ok := l.readOne()
			l.rtok <- struct{}{}
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
	<-l.rtok
	l.failRelays()
	l.rtok <- struct{}{}
}

// quiesce returns once no reader is filling a buffer of the dead lane, so a
// failed Get's caller owns its buffer again.
func (l *lane) quiesce() {
	<-l.rtok
	l.rtok <- struct{}{}
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

// readFor reads frames, holding the read token, until s completes or the
// lane fails; it reports whether s completed. deadline bounds the wait.
func (l *lane) readFor(s *slot, deadline time.Time) bool {
	ok := !l.deadNow()
	if ok {
		l.rwatch.start(deadline)
	wait:
		for {
			select {
			case <-s.done:
				break wait
			default:
			}
			if !l.readOne() {
				ok = false
				break
			}
		}
		l.rwatch.stop()
	}
	l.rtok <- struct{}{}
	if ok {
		return true
	}
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// readUntilAcked reads frames, holding the read token (which it returns),
// until the peer has acknowledged frame mark or the lane fails; it reports
// whether mark was acknowledged. deadline bounds the wait.
func (l *lane) readUntilAcked(mark uint64, deadline time.Time) bool {
	ok := !l.deadNow()
	if ok && l.acked.Load() < mark {
		l.rwatch.start(deadline)
		for l.acked.Load() < mark {
			if !l.readOne() {
				ok = false
				break
			}
		}
		l.rwatch.stop()
	}
	l.rtok <- struct{}{}
	return ok || l.acked.Load() >= mark
}

// readOne reads, checks and completes one response; the caller holds the
// read token. It reports false once the lane has failed.
func (l *lane) readOne() bool {
	n := l.p.n
	if _, err := io.ReadFull(l.br, l.hb[:]); err != nil {
		l.fail(errs.ErrPEFailed, "connection to %s lost: %v", l.addr, err)
		return false
	}
	s, h, err := l.match(l.hb[:])
	if err == nil && h.status == statusOK && h.op == opGetResp {
		if _, rerr := io.ReadFull(l.br, s.dst); rerr != nil {
			err = rerr
		}
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

// match decodes a response header and finds its slot, checking everything
// about it before the payload is read. An unsolicited ack has no slot.
func (l *lane) match(b []byte) (*slot, header, error) {
	h, err := decodeHeader(b)
	if err != nil {
		return nil, h, err
	}
	if h.isRequest() {
		return nil, h, errors.New("request on a dialled connection")
	}
	if h.op == opAck {
		if h.status != statusOK {
			return nil, h, errors.New("ack with a failure status")
		}
		return nil, h, l.ack(h.operand, true)
	}
	s := l.slots.lookup(h.id)
	if s == nil || s.want != h.op {
		return nil, h, errNoRequest
	}
	switch {
	case h.status != statusOK:
		if h.operand >= uint64(l.p.n.cfg.NPEs) {
			return nil, h, errors.New("failure status names no PE")
		}
		s.fail = int(h.operand)
	case h.op == opGetResp:
		if int(h.n) != len(s.dst) {
			return nil, h, errors.New("get response length differs from the request")
		}
	case h.op == opAtomicResp:
		s.old = h.operand
	case h.op == opFlushAck:
		if err := l.ack(h.operand, false); err != nil {
			return nil, h, err
		}
		s.old = h.operand
	}
	return s, h, nil
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
		s.done <- struct{}{}
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
