package main

/*
#include "gs.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/goshmem/shmem"
)

// The RMA fallbacks: the C side calls these only when it cannot reach the
// peer directly (gs.h), or when the address is not symmetric, which the
// Go side then reports.

func local(p unsafe.Pointer, n uint64) []byte {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(p), n)
}

//export goshmem_rma
func goshmem_rma(op *C.char, ctx C.uintptr_t, kind C.int, remote, loc unsafe.Pointer, n C.size_t, pe C.int) {
	defer guard(op)
	if n == 0 {
		return
	}
	s := world(op)
	p := s.pe(op, ctx)
	if p == nil {
		return
	}
	sym, err := s.symOn(remote, uint64(n), int(pe))
	if err == nil {
		buf := local(loc, uint64(n))
		switch kind {
		case C.GS_PUT:
			err = shmem.Put(p, sym, buf, int(pe))
		case C.GS_PUT_NBI:
			err = shmem.PutNBI(p, sym, buf, int(pe))
		case C.GS_GET:
			err = shmem.Get(p, buf, sym, int(pe))
		default:
			err = shmem.GetNBI(p, buf, sym, int(pe))
		}
	}
	if err != nil {
		die(op, err)
	}
}

//export goshmem_strided
func goshmem_strided(op *C.char, ctx C.uintptr_t, put C.int, remote, loc unsafe.Pointer, esize C.size_t, rstride, lstride C.ptrdiff_t, n C.size_t, pe C.int) {
	defer guard(op)
	if n == 0 {
		return
	}
	s := world(op)
	p := s.pe(op, ctx)
	if p == nil {
		return
	}
	if rstride < 1 || lstride < 1 {
		die(op, fmt.Errorf("%w: strides must be positive (%d, %d)", shmem.ErrInvalidArgument, rstride, lstride))
		return
	}
	rs, ls, cnt, w := int(rstride), int(lstride), int(n), int(esize)
	var err error
	switch w {
	case 1:
		err = strided[uint8](s, p, put != 0, remote, loc, rs, ls, cnt, int(pe))
	case 2:
		err = strided[uint16](s, p, put != 0, remote, loc, rs, ls, cnt, int(pe))
	case 4:
		err = strided[uint32](s, p, put != 0, remote, loc, rs, ls, cnt, int(pe))
	case 8:
		err = strided[uint64](s, p, put != 0, remote, loc, rs, ls, cnt, int(pe))
	case 16:
		// Two interleaved streams of 8-byte halves, each with doubled strides.
		err = strided[uint64](s, p, put != 0, remote, loc, 2*rs, 2*ls, cnt, int(pe))
		if err == nil {
			err = strided[uint64](s, p, put != 0, unsafe.Add(remote, 8), unsafe.Add(loc, 8), 2*rs, 2*ls, cnt, int(pe))
		}
	default:
		err = fmt.Errorf("%w: element size %d", shmem.ErrInvalidArgument, w)
	}
	if err != nil {
		die(op, err)
	}
}

func strided[T uint8 | uint16 | uint32 | uint64](s *state, p *shmem.PE, put bool, remote, loc unsafe.Pointer, rs, ls, n, pe int) error {
	var z T
	w := uint64(unsafe.Sizeof(z))
	rspan, lspan := uint64((n-1)*rs+1), uint64((n-1)*ls+1)
	b, err := s.symOn(remote, rspan*w, pe)
	if err != nil {
		return err
	}
	sym := shmem.SymAs[T](b)
	buf := unsafe.Slice((*T)(loc), lspan)
	if put {
		return shmem.IPut(p, sym, buf, rs, ls, n, pe)
	}
	return shmem.IGet(p, buf, sym, ls, rs, n, pe)
}

//export goshmem_put_signal
func goshmem_put_signal(op *C.char, ctx C.uintptr_t, nbi C.int, dest, src unsafe.Pointer, n C.size_t, sig unsafe.Pointer, value C.uint64_t, sigop C.int, pe C.int) {
	defer guard(op)
	s := world(op)
	p := s.pe(op, ctx)
	if p == nil {
		return
	}
	d, err := s.symOn(dest, uint64(n), int(pe))
	if n == 0 {
		d, err = s.symOn(dest, 1, int(pe))
		d = d.Slice(0, 0)
	}
	var g shmem.Sym[uint8]
	if err == nil {
		g, err = s.symWord(sig, 8, int(pe))
	}
	if err == nil {
		f := shmem.PutSignal[uint8]
		if nbi != 0 {
			f = shmem.PutSignalNBI[uint8]
		}
		err = f(p, d, local(src, uint64(n)), shmem.SymAs[uint64](g), uint64(value), shmem.SignalOp(sigop), int(pe))
	}
	if err != nil {
		die(op, err)
	}
}

//export goshmem_amo
func goshmem_amo(op *C.char, ctx C.uintptr_t, code C.int, width C.size_t, addr unsafe.Pointer, value, cond C.uint64_t, pe C.int) C.uint64_t {
	defer guard(op)
	s := world(op)
	p := s.pe(op, ctx)
	if p == nil {
		return 0
	}
	b, err := s.symWord(addr, uint64(width), int(pe))
	var r uint64
	if err == nil {
		if width == 4 {
			var v uint32
			v, err = amo(p, shmem.SymAs[uint32](b), code, uint32(value), uint32(cond), int(pe))
			r = uint64(v)
		} else {
			r, err = amo(p, shmem.SymAs[uint64](b), code, uint64(value), uint64(cond), int(pe))
		}
	}
	if err != nil {
		die(op, err)
	}
	return C.uint64_t(r)
}

// goshmem_lock_amo is goshmem_amo on the 8-byte word of a static lock on
// PE 0 (slock.c), for a lock call that waits for its holder. An atomic
// that fails because a PE failed reports the failure this PE recorded
// first, as the Go lock's wait does (core.PE.WaitLock): PE 0 may have
// ended because the holder died (a C program ends on its first error),
// and its end is then not the cause.
//
//export goshmem_lock_amo
func goshmem_lock_amo(op *C.char, code C.int, addr unsafe.Pointer, value, cond C.uint64_t) C.uint64_t {
	defer guard(op)
	s := world(op)
	b, err := s.symWord(addr, 8, 0)
	var r uint64
	if err == nil {
		r, err = amo(s.p, shmem.SymAs[uint64](b), code, uint64(value), uint64(cond), 0)
	}
	if err != nil {
		if errors.Is(err, shmem.ErrPEFailed) {
			if first := failedFirst(s, op); first != nil {
				err = first
			}
		}
		die(op, err)
	}
	return C.uint64_t(r)
}

//export goshmem_amo_nbi
func goshmem_amo_nbi(op *C.char, ctx C.uintptr_t, code C.int, width C.size_t, addr unsafe.Pointer, value, cond C.uint64_t, pe C.int, fetch unsafe.Pointer) {
	defer guard(op)
	s := world(op)
	p := s.pe(op, ctx)
	if p == nil {
		return
	}
	b, err := s.symWord(addr, uint64(width), int(pe))
	if err == nil {
		// fetch is the C caller's memory, which it keeps until the next
		// quiet (the spec's rule): goshmem fills it by then.
		if width == 4 {
			err = amoNBI(p, shmem.SymAs[uint32](b), (*uint32)(fetch), code, uint32(value), uint32(cond), int(pe))
		} else {
			err = amoNBI(p, shmem.SymAs[uint64](b), (*uint64)(fetch), code, uint64(value), uint64(cond), int(pe))
		}
	}
	if err != nil {
		die(op, err)
	}
}

// amoNBI is amo's non-blocking form for the fetching atomics: the old
// value lands in *fetch by the next quiet.
func amoNBI[T uint32 | uint64](p *shmem.PE, d shmem.Sym[T], fetch *T, code C.int, v, cond T, pe int) error {
	switch code {
	case C.GS_AMO_FETCH:
		return shmem.AtomicFetchNBI(p, fetch, d, pe)
	case C.GS_AMO_SWAP:
		return shmem.AtomicSwapNBI(p, fetch, d, v, pe)
	case C.GS_AMO_CSWAP:
		return shmem.AtomicCompareSwapNBI(p, fetch, d, cond, v, pe)
	case C.GS_AMO_FADD:
		return shmem.AtomicFetchAddNBI(p, fetch, d, v, pe)
	case C.GS_AMO_FAND:
		return shmem.AtomicFetchAndNBI(p, fetch, d, v, pe)
	case C.GS_AMO_FOR:
		return shmem.AtomicFetchOrNBI(p, fetch, d, v, pe)
	case C.GS_AMO_FXOR:
		return shmem.AtomicFetchXorNBI(p, fetch, d, v, pe)
	}
	return fmt.Errorf("%w: non-blocking atomic operation %d", shmem.ErrInvalidArgument, code)
}

// amo applies an atomic by its bits: signedness does not change add, the
// bitwise operations or compare-and-swap, and floats are fetched, set and
// swapped as bits.
func amo[T uint32 | uint64](p *shmem.PE, d shmem.Sym[T], code C.int, v, cond T, pe int) (T, error) {
	switch code {
	case C.GS_AMO_FETCH:
		return shmem.AtomicFetch(p, d, pe)
	case C.GS_AMO_SET:
		return 0, shmem.AtomicSet(p, d, v, pe)
	case C.GS_AMO_SWAP:
		return shmem.AtomicSwap(p, d, v, pe)
	case C.GS_AMO_CSWAP:
		return shmem.AtomicCompareSwap(p, d, cond, v, pe)
	case C.GS_AMO_FADD:
		return shmem.AtomicFetchAdd(p, d, v, pe)
	case C.GS_AMO_FAND:
		return shmem.AtomicFetchAnd(p, d, v, pe)
	case C.GS_AMO_FOR:
		return shmem.AtomicFetchOr(p, d, v, pe)
	case C.GS_AMO_FXOR:
		return shmem.AtomicFetchXor(p, d, v, pe)
	case C.GS_AMO_ADD:
		return 0, shmem.AtomicAdd(p, d, v, pe)
	case C.GS_AMO_AND:
		return 0, shmem.AtomicAnd(p, d, v, pe)
	case C.GS_AMO_OR:
		return 0, shmem.AtomicOr(p, d, v, pe)
	case C.GS_AMO_XOR:
		return 0, shmem.AtomicXor(p, d, v, pe)
	}
	return 0, fmt.Errorf("%w: atomic operation %d", shmem.ErrInvalidArgument, code)
}

//export goshmem_quiet
func goshmem_quiet(op *C.char, ctx C.uintptr_t) {
	defer guard(op)
	s := world(op)
	if p := s.pe(op, ctx); p != nil {
		if err := p.Quiet(); err != nil {
			die(op, err)
		}
	}
}

//export goshmem_fence
func goshmem_fence(op *C.char, ctx C.uintptr_t) {
	defer guard(op)
	s := world(op)
	if p := s.pe(op, ctx); p != nil {
		p.Fence()
	}
}

//export goshmem_barrier_all
func goshmem_barrier_all(op *C.char, syncOnly C.int) {
	defer guard(op)
	s := world(op)
	var err error
	if syncOnly != 0 {
		err = s.p.SyncAll()
	} else {
		err = s.p.BarrierAll()
	}
	if err != nil {
		die(op, err)
	}
}

//export goshmem_lock
func goshmem_lock(op *C.char, kind C.int, lock unsafe.Pointer) C.int {
	defer guard(op)
	s := world(op)
	// A static lock reaches here only when PE 0, which holds the word of a
	// C lock (slock.c), is not mapped: the error names PE 0.
	b, err := s.symWord(lock, 8, 0)
	l := shmem.SymAs[int64](b)
	got := false
	if err == nil {
		switch kind {
		case C.GS_LOCK_SET:
			err = shmem.SetLock(s.p, l)
		case C.GS_LOCK_CLEAR:
			err = shmem.ClearLock(s.p, l)
		default:
			got, err = shmem.TestLock(s.p, l)
		}
	}
	if err != nil {
		die(op, err)
	}
	if got {
		return 0 // shmem_test_lock: 0 when it acquired the lock
	}
	return 1
}

// symWord is symOn for the word of an atomic, signal, lock or wait, width bytes:
// the spec's memory model requires it naturally aligned, and goshmem's
// atomics address whole elements, so a misaligned one is refused here,
// saying so (SymAs would only give the zero Sym).
func (s *state) symWord(addr unsafe.Pointer, width uint64, pe int) (shmem.Sym[uint8], error) {
	if uintptr(addr)%uintptr(width) != 0 {
		return shmem.Sym[uint8]{}, fmt.Errorf("%w: address %p is not aligned to %d bytes (PE %d -> PE %d): the word of an atomic, signal, lock or wait must be naturally aligned",
			shmem.ErrInvalidArgument, addr, width, s.p.MyPE(), pe)
	}
	return s.symOn(addr, width, pe)
}
