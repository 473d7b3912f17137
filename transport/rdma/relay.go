package rdma

import (
	"fmt"
)

// relay forwards a request addressed to another rank over this node's own
// path to it, on the same kind of lane it arrived on, so that a flush
// relayed behind the frames covers them. Answers come back through the
// lane's reader (relayResponse) in the order the target sent them. Only a
// hostile frame returns an error; an unreachable target is reported to the
// sender as a failure status.
func (sc *serverConn) relay(h *header) error {
	n := sc.n
	if int(h.dst) >= n.cfg.NPEs {
		return fmt.Errorf("%w: frame for PE %d in a world of %d", errField, h.dst, n.cfg.NPEs)
	}
	if h.hops >= maxHops {
		return fmt.Errorf("%w: frame for PE %d relayed %d times: routing loop", errField, h.dst, h.hops)
	}
	if int(h.n) > n.cfg.ChunkSize {
		return fmt.Errorf("%w: relayed frame of %d bytes over ChunkSize %d", errTooLong, h.n, n.cfg.ChunkSize)
	}
	h.hops++
	var l *lane
	if p := n.route(int(h.dst)); p != nil {
		l = p.lanes[small]
		if h.flags&flagBulk != 0 {
			l = p.lanes[bulk]
		}
		h.flags &^= flagBulk | flagAck // the lane sets its own
	}
	switch h.op {
	case opPut, opPutSignal, opAtomicPost:
		var payload []byte
		var buf *[]byte
		if h.n > 0 {
			buf = n.getBuf(int(h.n))
			payload = *buf
			if err := sc.src.readFull(payload); err != nil {
				n.putBuf(buf)
				return err
			}
		}
		if l == nil || l.forward(h, payload) != nil {
			sc.relayFail = int(h.dst)
		}
		if buf != nil {
			n.putBuf(buf)
		}
		return nil
	case opFlush:
		if sc.relayFail >= 0 {
			return sc.respondFail(opFlushAck, h.id, sc.relayFail)
		}
	}
	if l == nil {
		return sc.respondFail(responseOp(h.op), h.id, int(h.dst))
	}
	if !sc.shared { // written once: the answering goroutines read it
		sc.shared = true
	}
	l.forwardRequest(h, sc)
	return nil
}

func (sc *serverConn) respondFail(op uint8, id uint64, rank int) error {
	r := header{op: op, id: id, status: statusFailed, operand: uint64(rank)}
	return sc.respond(&r, nil, false)
}

// forward writes a relayed frame that needs no answer, keeping its source.
func (l *lane) forward(h *header, payload []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.ready("relay")
	if err == nil {
		err = l.writeLocked(h, payload, true, "relay", l.p.n.clock.now())
	}
	return err
}

// forwardRequest sends a relayed request whose answer must go back to sc;
// on failure sc gets a failure status naming this lane's peer.
func (l *lane) forwardRequest(h *header, sc *serverConn) {
	id, operand := h.id, h.operand
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.ready("relay")
	var s *slot
	if err == nil {
		var ok bool
		if s, ok = l.acquireSlot(); !ok {
			err = l.errFor("relay")
		}
	}
	if err != nil {
		sc.respondFailNow(responseOp(h.op), id, l.p.peer)
		return
	}
	s.want = responseOp(h.op)
	s.relay, s.relayID, s.relayOp = sc, id, operand
	if h.op == opGet {
		s.relayBf = l.p.n.getBuf(int(h.n))
		s.dst = *s.relayBf
	}
	if h.op == opFlush {
		h.operand = l.written.Load()
	}
	now := l.p.n.clock.now()
	s.deadline = now + int64(l.p.n.cfg.OpTimeout)
	h.id = s.id()
	s.state.Store(slotPending)
	l.orphans.Add(1)
	if l.writeLocked(h, nil, false, "relay", now) != nil {
		if s.state.CompareAndSwap(slotPending, slotClaimed) {
			l.orphans.Add(-1)
			sc.respondFailNow(s.want, id, l.p.peer)
			l.slots.releaseBuf(s, l.p.n)
		}
		return
	}
	l.wakeReader()
}

func (sc *serverConn) respondFailNow(op uint8, id uint64, rank int) {
	r := header{op: op, id: id, status: statusFailed, operand: uint64(rank)}
	sc.respond(&r, nil, true) // a dead sender is noticed by its own reader
}

// relayResponse sends the answer a relayed request got back to the PE that
// asked, under the id it used. Called by the forwarding lane's reader.
func (sc *serverConn) relayResponse(s *slot, h *header) {
	r := header{op: h.op, id: s.relayID, src: h.src, dst: h.dst}
	var payload []byte
	switch {
	case s.fail >= 0:
		r.status, r.operand = statusFailed, uint64(s.fail)
		r.op = s.want
	case h.op == opGetResp:
		payload = s.dst
		r.n = uint32(len(payload))
	case h.op == opAtomicResp:
		r.operand = h.operand
	case h.op == opFlushAck:
		r.operand = s.relayOp
	}
	sc.respond(&r, payload, true) // a dead sender is noticed by its own reader
}
