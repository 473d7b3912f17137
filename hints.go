package shmem

import (
	"github.com/goshmem/shmem/internal/errs"
)

// MallocHint says how a symmetric object will be used (SHMEM_MALLOC_*);
// hints are combined with |.
type MallocHint int

// The hints of shmem_malloc_with_hints.
const (
	// MallocAtomicsRemote: the object's words are mostly targets of
	// remote atomics.
	MallocAtomicsRemote MallocHint = 1 << iota
	// MallocSignalRemote: the object's words are signal words of
	// PutSignal.
	MallocSignalRemote
)

// hintAlign is the alignment goshmem gives objects hinted for atomics or
// signals: a cache line of their own, so that remote updates of them do
// not bounce the line under a neighbouring object's loads and stores (and
// a waiter polling a signal is not woken by a neighbour's writes).
const hintAlign = 64

// MallocWithHints is Malloc with hints on the object's use
// (shmem_malloc_with_hints). Collective, like Malloc; every PE passes the
// same hints. Atomics and signal hints start the object on a cache line of
// its own on every backend; hints 0 is Malloc. Unknown hint bits are
// ErrInvalidArgument on every PE.
func MallocWithHints[T Elem](p *PE, n int, hints MallocHint) (Sym[T], error) {
	const op = "MallocWithHints"
	if hints < 0 || hints > MallocAtomicsRemote|MallocSignalRemote {
		return Sym[T]{}, refuse(p, op, errs.New(op, p.MyPE(), errs.NoPE, errs.ErrInvalidArgument, "unknown hints %#x", int(hints)))
	}
	if hints == 0 {
		return Malloc[T](p, n)
	}
	return allocate[T](p, op, n, hintAlign)
}

// AddrAccessible reports whether s can be reached on PE pe from p
// (shmem_addr_accessible): s is a live object of p's world and pe a live
// PE that p reaches. Every part of the symmetric heap is remotely
// accessible in goshmem, so it is false only for a zero, freed or foreign
// Sym, or a PE that Accessible rejects. The statics region (PE.Statics)
// is accessible on the PEs whose path carries it.
func AddrAccessible[T Elem](p *PE, s Sym[T], pe int) bool {
	var err error
	if s.slot == staticsSlot && !p.zero() {
		_, _, err = s.staticsTarget(p, "AddrAccessible", pe, 0, 0)
	} else {
		_, err = s.check(p, "AddrAccessible", pe, 0, 0)
	}
	return err == nil && p.Accessible(pe)
}
