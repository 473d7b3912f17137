package rdma

import (
	"bufio"
	"errors"
	"io"
	"net"

	"github.com/goshmem/shmem/internal/errs"
)

var errNoRequest = errors.New("response matches no pending request")

// readLoop reads the responses of one lane in order and completes their
// slots. Because the peer answers a connection's frames in order, a flush
// ack read here proves every earlier response on the lane was handled.
func (l *lane) readLoop(c net.Conn) {
	n := l.p.n
	defer n.wg.Done()
	defer close(l.readerDone)
	br := bufio.NewReaderSize(c, 64<<10)
	var hb [headerSize]byte
	for {
		if _, err := io.ReadFull(br, hb[:]); err != nil {
			l.fail(errs.ErrPEFailed, "connection to %s lost: %v", l.addr, err)
			l.failRelays()
			return
		}
		s, h, err := l.match(hb[:])
		if err == nil && h.status == statusOK && h.op == opGetResp {
			if _, rerr := io.ReadFull(br, s.dst); rerr != nil {
				err = rerr
			}
		}
		if err != nil {
			n.log.Warn("rdma: closing connection", "rank", n.cfg.Rank, "peer", l.p.peer, "addr", l.addr, "reason", err)
			l.fail(errs.ErrPEFailed, "connection to %s: %v", l.addr, err)
			l.failRelays()
			return
		}
		l.complete(s, &h)
	}
}

// match decodes a response header and finds its slot, checking everything
// about it before the payload is read.
func (l *lane) match(b []byte) (*slot, header, error) {
	h, err := decodeHeader(b)
	if err != nil {
		return nil, h, err
	}
	if h.isRequest() {
		return nil, h, errors.New("request on a dialled connection")
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
		if h.operand > l.written.Load() {
			return nil, h, errors.New("flush ack beyond what was written")
		}
		s.old = h.operand
		for {
			a := l.acked.Load()
			if h.operand <= a || l.acked.CompareAndSwap(a, h.operand) {
				break
			}
		}
	}
	return s, h, nil
}

// complete hands a finished slot to whoever owns it.
func (l *lane) complete(s *slot, h *header) {
	switch {
	case s.relay != nil:
		if s.state.CompareAndSwap(slotPending, slotClaimed) {
			s.relay.relayResponse(s, h)
			l.slots.releaseBuf(s, l.p.n)
		}
	case s.detached:
		if s.fail >= 0 {
			l.nbiFail.Store(int64(s.fail))
		}
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
		s.fail = l.p.peer
		h := header{op: s.want}
		s.relay.relayResponse(s, &h)
		t.releaseBuf(s, l.p.n)
	}
}
