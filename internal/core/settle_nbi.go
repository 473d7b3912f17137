package core

import "github.com/goshmem/shmem/transport"

// AtomicNBI passes a non-blocking fetching atomic to a network path that
// has them, settling its error like the path's other operations; on one
// without, the atomic is performed at once and dst filled on return.
func (p settledPath) AtomicNBI(op transport.AtomicOp, width int, off uint64, operand, cond uint64, dst []byte) error {
	if nb, ok := p.Path.(transport.AtomicNBIPath); ok {
		return p.s.settle(nb.AtomicNBI(op, width, off, operand, cond, dst))
	}
	old, err := p.Path.Atomic(op, width, off, operand, cond)
	if err != nil {
		return p.s.settle(err)
	}
	transport.PutWord(dst, width, old)
	return nil
}
