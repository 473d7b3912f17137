package rdma

import (
	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
)

// engine completes the operations of every path of one node.
//
// Ordering across a path's two lanes: each lane is one TCP connection that
// the peer applies in order, so frames on one lane never overtake each
// other. Fence therefore costs no message: it records, for every lane with
// unacknowledged writes, how many it has written; the first frame a later
// operation sends on the other lane of that path first flushes the marked
// lane (one round trip, paid only when traffic actually switches lanes).
// Quiet waits, on every lane with unacknowledged writes, for the ack
// covering them: on a direct lane the peer sends it unasked once its input
// runs dry, so Quiet after a put costs no message of its own; a relayed
// lane is flushed (all of them at once, then the answers are awaited).
//
// The decisions are ackproto.go's (fenceMarkAfter, quietAction).
type engine struct {
	n  *Node
	st *stream // nil for the node's own engine
}

// ConnStats reports the node's lane connections (transport.ConnCounter).
// A stream's engine reports none: its lanes are counted by the node's, so
// that a PE summing its engines counts each once.
func (e *engine) ConnStats() transport.ConnStats {
	if e.st != nil {
		return transport.ConnStats{}
	}
	return transport.ConnStats{Connects: e.n.connects.Load(), Redials: e.n.redials.Load()}
}

// list returns the paths the engine completes: the node's, or its stream's.
func (e *engine) list() *[]*path {
	if e.st != nil {
		return e.st.all.Load()
	}
	return e.n.all.Load()
}

// Fence orders, per peer, the writes issued before it ahead of those after.
func (e *engine) Fence() error {
	ps := e.list()
	if ps == nil {
		return nil
	}
	for _, p := range *ps {
		for _, l := range p.lanes {
			w, a := l.written.Load(), l.acked.Load()
			for {
				m := l.fenceMark.Load()
				n := fenceMarkAfter(w, a, m)
				if n == m || l.fenceMark.CompareAndSwap(m, n) {
					break
				}
			}
		}
	}
	return nil
}

// pendingFlush is a lane Quiet waits for: for the ack of frame mark, or
// for the answer to flush s.
type pendingFlush struct {
	l    *lane
	s    *slot
	mark uint64
}

// Quiet returns when every write issued before it on any path of the node
// is applied at its target and every GetNBI has filled its buffer: a flush
// ack on a lane proves that everything the lane carried before it was
// applied and answered. Errors name the failed peer.
func (e *engine) Quiet() error {
	ps := e.list()
	if ps == nil {
		return nil
	}
	bp := e.n.flushes.Get().(*[]pendingFlush)
	pend := (*bp)[:0]
	var errList error
	for _, p := range *ps {
		for _, l := range p.lanes {
			if f := l.nbiFail.Swap(-1); f >= 0 {
				errList = join(errList, errs.New("Quiet", e.n.cfg.Rank, int(f), errs.ErrPEFailed, "a GetNBI relayed towards PE %d failed", p.peer))
			}
			step, mark := quietAction(l.written.Load(), l.acked.Load(), l.autoAck)
			switch step {
			case quietSkip:
				continue
			case quietAwait:
				pend = append(pend, pendingFlush{l: l, mark: mark})
				continue
			}
			h := p.header(opFlush)
			s, err := l.request(&h, nil, false, "Quiet")
			if err != nil {
				errList = join(errList, err)
				continue
			}
			pend = append(pend, pendingFlush{l: l, s: s})
		}
	}
	for i, f := range pend {
		var err error
		if f.s == nil {
			err = f.l.settle(f.mark, "Quiet")
		} else {
			_, err = f.l.await(f.s, "Quiet")
		}
		if err != nil {
			errList = join(errList, err)
		}
		pend[i] = pendingFlush{}
	}
	*bp = pend[:0]
	e.n.flushes.Put(bp)
	return errList
}

func join(a, b error) error { return errs.Join(a, b) }

// Close closes the node (see Node.Close), or on a stream's engine the
// stream (see stream.Close).
func (e *engine) Close() error {
	if e.st != nil {
		return e.st.Close()
	}
	return e.n.Close()
}
