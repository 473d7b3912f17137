package shmem

import (
	"github.com/goshmem/shmem/internal/core"
	"unsafe"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
)

// amoNBI is a fetching atomic whose old value goes to *fetch
// (shmem_atomic_fetch_*_nbi), which the caller must not read or write
// before the next Quiet (of the PE or context the call was made on). Over
// TCP the call returns once the request is sent and the answer fills
// *fetch in the background; on shared memory and the simulator the atomic
// completes at once and *fetch is filled on return. A nil fetch is
// ErrInvalidArgument; on an error *fetch is untouched.
func amoNBI[T AtomicValue](p *PE, name string, fetch *T, dst Sym[T], op transport.AtomicOp, v, cond T, pe int) error {
	if fetch == nil {
		return errs.New(name, p.MyPE(), pe, errs.ErrInvalidArgument, "nil fetch pointer")
	}
	path, off, err := dst.target(p, name, pe, 0, 1)
	if err != nil {
		return err
	}
	w := elemSize[T]()
	if off%w != 0 {
		return errs.New(name, p.MyPE(), pe, errs.ErrInvalidArgument, "misaligned %d-byte atomic at offset %d", w, off)
	}
	// Counted as a fetching atomic, timed to its return.
	if c := p.c.Counts().Count(core.OpAtomicFetch, pe, int(w)); c != nil {
		return named(name, p, c.Time(func() error { return fetchNBI(path, op, int(w), off, v, cond, fetch) }))
	}
	return named(name, p, fetchNBI(path, op, int(w), off, v, cond, fetch))
}

// fetchNBI issues the atomic through path, non-blocking where the path
// has them (the old value lands in *fetch by the next Quiet), at once
// otherwise.
func fetchNBI[T AtomicValue](path transport.Path, op transport.AtomicOp, w int, off uint64, v, cond T, fetch *T) error {
	if nb, ok := path.(transport.AtomicNBIPath); ok {
		return nb.AtomicNBI(op, w, off, toBits(v), toBits(cond), asBytes(unsafe.Slice(fetch, 1)))
	}
	old, err := path.Atomic(op, w, off, toBits(v), toBits(cond))
	if err != nil {
		return err
	}
	*fetch = fromBits[T](old)
	return nil
}

// AtomicFetchNBI reads src's element 0 on PE pe into *fetch, by the next
// Quiet (shmem_atomic_fetch_nbi).
func AtomicFetchNBI[T AtomicValue](p *PE, fetch *T, src Sym[T], pe int) error {
	return amoNBI(p, "AtomicFetchNBI", fetch, src, transport.AtomicFetch, 0, 0, pe)
}

// AtomicSwapNBI writes v and puts the previous value in *fetch by the next
// Quiet (shmem_atomic_swap_nbi).
func AtomicSwapNBI[T AtomicValue](p *PE, fetch *T, dst Sym[T], v T, pe int) error {
	return amoNBI(p, "AtomicSwapNBI", fetch, dst, transport.AtomicSwap, v, 0, pe)
}

// AtomicCompareSwapNBI writes v if the element equals cond and puts the
// previous value in *fetch by the next Quiet (shmem_atomic_compare_swap_nbi).
func AtomicCompareSwapNBI[T Integer](p *PE, fetch *T, dst Sym[T], cond, v T, pe int) error {
	return amoNBI(p, "AtomicCompareSwapNBI", fetch, dst, transport.AtomicCompareSwap, v, cond, pe)
}

// AtomicFetchIncNBI adds one and puts the previous value in *fetch by the
// next Quiet (shmem_atomic_fetch_inc_nbi).
func AtomicFetchIncNBI[T Integer](p *PE, fetch *T, dst Sym[T], pe int) error {
	return amoNBI(p, "AtomicFetchIncNBI", fetch, dst, transport.AtomicFetchAdd, 1, 0, pe)
}

// AtomicFetchAddNBI adds v (wrapping) and puts the previous value in
// *fetch by the next Quiet (shmem_atomic_fetch_add_nbi).
func AtomicFetchAddNBI[T Integer](p *PE, fetch *T, dst Sym[T], v T, pe int) error {
	return amoNBI(p, "AtomicFetchAddNBI", fetch, dst, transport.AtomicFetchAdd, v, 0, pe)
}

// AtomicFetchAndNBI ands v in and puts the previous value in *fetch by the
// next Quiet (shmem_atomic_fetch_and_nbi).
func AtomicFetchAndNBI[T Integer](p *PE, fetch *T, dst Sym[T], v T, pe int) error {
	return amoNBI(p, "AtomicFetchAndNBI", fetch, dst, transport.AtomicFetchAnd, v, 0, pe)
}

// AtomicFetchOrNBI ors v in and puts the previous value in *fetch by the
// next Quiet (shmem_atomic_fetch_or_nbi).
func AtomicFetchOrNBI[T Integer](p *PE, fetch *T, dst Sym[T], v T, pe int) error {
	return amoNBI(p, "AtomicFetchOrNBI", fetch, dst, transport.AtomicFetchOr, v, 0, pe)
}

// AtomicFetchXorNBI xors v in and puts the previous value in *fetch by the
// next Quiet (shmem_atomic_fetch_xor_nbi).
func AtomicFetchXorNBI[T Integer](p *PE, fetch *T, dst Sym[T], v T, pe int) error {
	return amoNBI(p, "AtomicFetchXorNBI", fetch, dst, transport.AtomicFetchXor, v, 0, pe)
}
