package shmem

import "github.com/goshmem/shmem/internal/errs"

// A nil *PE, or a PE that Init, sim.Run or CreateCtx did not make (the
// zero PE{}), is a mistake of the caller's, not a reason to panic: every
// call on one fails with ErrInvalidArgument, or returns the zero answer
// (MyPE -1, NPEs -1, Accessible false) where the call has no error:
// MyPE and NPEs give -1 as a nil or destroyed Team's do.

// zero reports whether p is nil or the zero PE.
func (p *PE) zero() bool { return p == nil || p.c == nil }

// zeroPE is the error of op called on a nil or zero PE.
func zeroPE(op string) error {
	return errs.New(op, errs.NoPE, errs.NoPE, errs.ErrInvalidArgument, "nil or zero *PE (use the one Init, sim.Run or CreateCtx returned)")
}
