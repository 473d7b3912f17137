package rdma

import (
	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
)

// AtomicNBI issues a fetching atomic and returns at once; the answer is
// read like a GetNBI's (by whoever holds the lane's read side) and its old
// value written into dst, which the next Quiet waits for: the flush that
// completes the lane is answered after the atomic.
func (p *path) AtomicNBI(op transport.AtomicOp, width int, off uint64, operand, cond uint64, dst []byte) error {
	if err := p.checkAtomic(op, width, off, "AtomicNBI"); err != nil {
		return err
	}
	if len(dst) < width {
		return errs.New("AtomicNBI", p.n.cfg.Rank, p.peer, errs.ErrInvalidArgument, "%d bytes for a %d-byte value", len(dst), width)
	}
	if err := p.order(small, true, "AtomicNBI"); err != nil {
		return err
	}
	h := p.header(opAtomic)
	h.aop, h.width, h.off, h.operand, h.cond = uint8(op), uint8(width), off, operand, cond
	_, err := p.lanes[small].request(&h, dst[:width], true, "AtomicNBI")
	return err
}
