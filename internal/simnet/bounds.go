package simnet

import (
	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
)

// The bounds checks of the simulated paths (pathtest.BoundsInvalid). The
// root package checks every symmetric address first, so these refuse only
// a caller below it (the conformance suite); they run before n.mu is
// taken, as a panic there would leave it held.

// outside is the error of an op of n bytes at off outside the target's heap.
func (pa *path) outside(op string, off uint64, n int) error {
	return errs.New(op, pa.p.rank, int(pa.to), errs.ErrInvalidArgument, "%d bytes at offset %d of a %d-byte heap", n, off, pa.size)
}

// checkAtomic refuses an unknown op, a width other than 4 or 8, a
// misaligned word and one outside the target's heap.
func (pa *path) checkAtomic(aop transport.AtomicOp, width int, off uint64, op string) error {
	if !aop.Valid() || (width != 4 && width != 8) || off%uint64(width) != 0 {
		return errs.New(op, pa.p.rank, int(pa.to), errs.ErrInvalidArgument, "atomic op %d width %d at offset %d", aop, width, off)
	}
	if uint64(width) > pa.size || off > pa.size-uint64(width) {
		return pa.outside(op, off, width)
	}
	return nil
}

// checkSignal refuses an unknown signal op, a misaligned signal word, and
// data or a signal outside the target's heap.
func (pa *path) checkSignal(off uint64, n int, sigOff uint64, sop transport.SignalOp) error {
	const op = "PutSignal"
	if !sop.Valid() || sigOff%8 != 0 {
		return errs.New(op, pa.p.rank, int(pa.to), errs.ErrInvalidArgument, "signal op %d at offset %d", sop, sigOff)
	}
	if off > pa.size || uint64(n) > pa.size-off {
		return pa.outside(op, off, n)
	}
	if 8 > pa.size || sigOff > pa.size-8 {
		return pa.outside(op, sigOff, 8)
	}
	return nil
}
