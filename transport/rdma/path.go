package rdma

import (
	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
)

// path is the transport.Path to one peer, directly or through a relay. Its
// small lane carries payloads up to SmallMax, atomics, signals and flushes;
// its bulk lane carries the rest, chunked, so that neither waits behind the
// other.
type path struct {
	n     *Node
	eng   *engine // the node's, or the stream's this path belongs to
	peer  int
	via   int // relay rank, or -1 for a direct path
	lanes [2]*lane
}

const (
	small = 0
	bulk  = 1
)

func (p *path) header(op uint8) header {
	return header{op: op, src: uint32(p.n.cfg.Rank), dst: uint32(p.peer)}
}

// order keeps Fence's promise before a frame goes out on lanes[i]: frames on
// one lane arrive in order, so only the other lane's frames issued before a
// Fence must be flushed first. readAfterWrite extends that to every earlier
// write, so a Get sees this PE's own earlier puts to the peer.
func (p *path) order(i int, readAfterWrite bool, op string) error {
	o := p.lanes[1-i]
	return o.settle(orderMark(o.written.Load(), o.fenceMark.Load(), readAfterWrite), op)
}

func (p *path) laneFor(n int) int {
	if n <= p.n.cfg.SmallMax {
		return small
	}
	return bulk
}

// Put writes src to the peer's heap at off; it returns once src is reusable.
func (p *path) Put(off uint64, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	return p.put(off, src, 0, 0, 0, "Put")
}

// PutSignal delivers src then updates the signal word: the signal frame
// follows the data on the same lane, and the peer applies a lane in order.
func (p *path) PutSignal(off uint64, src []byte, sigOff uint64, value uint64, op transport.SignalOp) error {
	if !op.Valid() || sigOff%8 != 0 {
		return errs.New("PutSignal", p.n.cfg.Rank, p.peer, errs.ErrInvalidArgument, "signal op %d at offset %d", op, sigOff)
	}
	return p.put(off, src, sigOff, value, uint8(op), "PutSignal")
}

// put sends src in frames of at most ChunkSize; with sigOp set, the last
// frame carries the signal.
func (p *path) put(off uint64, src []byte, sigOff, value uint64, sigOp uint8, op string) error {
	i := p.laneFor(len(src))
	if err := p.order(i, false, op); err != nil {
		return err
	}
	l, chunk := p.lanes[i], p.n.cfg.ChunkSize
	for {
		c := min(len(src), chunk)
		h := p.header(opPut)
		h.off = off
		if c == len(src) && sigOp != 0 {
			h.op, h.aop, h.cond, h.operand = opPutSignal, sigOp, sigOff, value
		}
		if err := l.send(&h, src[:c], op); err != nil {
			return err
		}
		off += uint64(c)
		src = src[c:]
		if len(src) == 0 {
			return nil
		}
	}
}

// Get fills dst from the peer's heap at off. Large reads are pipelined in
// chunks, at most MaxInflight bytes at a time.
func (p *path) Get(dst []byte, off uint64) error {
	if len(dst) == 0 {
		return nil
	}
	i := p.laneFor(len(dst))
	if err := p.order(i, true, "Get"); err != nil {
		return err
	}
	l, chunk := p.lanes[i], p.n.cfg.ChunkSize
	if len(dst) <= chunk {
		h := p.header(opGet)
		h.off = off
		h.n = uint32(len(dst))
		_, err := l.call(&h, dst, "Get")
		return err
	}
	var ring [64]*slot
	// Slots are released only by this loop's awaits, so more requests in
	// flight than MaxOutstanding would wait for a slot forever.
	window := min(len(ring), p.n.cfg.MaxInflight/chunk, p.n.cfg.MaxOutstanding)
	issued, waited := 0, 0
	var first error
	for len(dst) > 0 || waited < issued {
		if len(dst) > 0 && issued-waited < window && first == nil {
			c := min(len(dst), chunk)
			h := p.header(opGet)
			h.off, h.n = off, uint32(c)
			// While this caller issues, nobody may read the answers to the
			// chunks it already asked for; the peer, unable to write them,
			// stops reading, and a writer queued on the lane before this
			// request would stall both ends until the write deadline. So
			// the reader goroutine reads them meanwhile, as it does for
			// orphans.
			pending := issued > waited
			if pending {
				l.orphans.Add(1)
				l.wakeReader()
			}
			s, err := l.request(&h, dst[:c], false, "Get")
			if pending {
				l.orphans.Add(-1)
			}
			if err != nil {
				first = err
				dst = nil
				continue
			}
			ring[issued%len(ring)] = s
			issued++
			off += uint64(c)
			dst = dst[c:]
			continue
		}
		if waited == issued {
			break
		}
		if _, err := l.await(ring[waited%len(ring)], "Get"); err != nil && first == nil {
			first = err
		}
		waited++
	}
	return first
}

// GetNBI issues the reads and returns; the next Quiet waits for them.
func (p *path) GetNBI(dst []byte, off uint64) error {
	i := p.laneFor(len(dst))
	if err := p.order(i, true, "GetNBI"); err != nil {
		return err
	}
	l, chunk := p.lanes[i], p.n.cfg.ChunkSize
	for len(dst) > 0 {
		c := min(len(dst), chunk)
		h := p.header(opGet)
		h.off, h.n = off, uint32(c)
		if _, err := l.request(&h, dst[:c], true, "GetNBI"); err != nil {
			return err
		}
		off += uint64(c)
		dst = dst[c:]
	}
	return nil
}

// Atomic applies op at the peer and returns the old value. Like Get it is
// ordered after this PE's earlier writes to the peer.
func (p *path) Atomic(op transport.AtomicOp, width int, off uint64, operand, cond uint64) (uint64, error) {
	if err := p.checkAtomic(op, width, off, "Atomic"); err != nil {
		return 0, err
	}
	if err := p.order(small, true, "Atomic"); err != nil {
		return 0, err
	}
	h := p.header(opAtomic)
	h.aop, h.width, h.off, h.operand, h.cond = uint8(op), uint8(width), off, operand, cond
	return p.lanes[small].call(&h, nil, "Atomic")
}

// AtomicPost applies op at the peer without waiting; Quiet completes it.
func (p *path) AtomicPost(op transport.AtomicOp, width int, off uint64, operand uint64) error {
	if err := p.checkAtomic(op, width, off, "AtomicPost"); err != nil {
		return err
	}
	if err := p.order(small, false, "AtomicPost"); err != nil {
		return err
	}
	h := p.header(opAtomicPost)
	h.aop, h.width, h.off, h.operand = uint8(op), uint8(width), off, operand
	return p.lanes[small].send(&h, nil, "AtomicPost")
}

// checkAtomic refuses what the wire cannot carry; a frame the peer would
// reject would cost the whole connection.
func (p *path) checkAtomic(op transport.AtomicOp, width int, off uint64, name string) error {
	if !op.Valid() || (width != 4 && width != 8) || off%uint64(width) != 0 {
		return errs.New(name, p.n.cfg.Rank, p.peer, errs.ErrInvalidArgument, "atomic op %d width %d at offset %d", op, width, off)
	}
	return nil
}

// Ptr returns nil: the peer's memory is in another process.
func (p *path) Ptr(off uint64, n int) []byte { return nil }

// Engine returns the engine that completes the path: the node's, or the
// stream's for a path of a stream.
func (p *path) Engine() transport.Engine { return p.eng }
