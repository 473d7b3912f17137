package main

/*
#include "gs.h"
*/
import "C"

import (
	"unsafe"

	"github.com/goshmem/shmem"
)

// goshmem_wait1 is p2p.c's gs_wait for one variable of the heap when no
// peer is mapped: it waits in Go until the caller's ivar (type code tc)
// compares true with *value. Every write into the PE then comes through
// goshmem (gs_setup routes even the PE's own through Go), which rings the
// PE's bell, so the wait sleeps on it and leaves the core to the network
// reader that lands the writes; it ends, like every goshmem wait, on a
// failed or departed peer, a global exit or the operation timeout. It
// returns 1 once the condition holds, -1 after an error that did not end
// the program (SHMEMX_ERRORS_RETURN), and 0 without waiting for a variable
// it cannot wait on here (statics, 16-bit types), which the C side then
// polls.
//
//export goshmem_wait1
func goshmem_wait1(op *C.char, tc C.int, ivar unsafe.Pointer, cmp C.int, value unsafe.Pointer) C.int {
	defer guard(op)
	s := world(op)
	var n uint64
	switch tc {
	case C.GS_I32, C.GS_U32:
		n = 4
	case C.GS_I64, C.GS_U64:
		n = 8
	default:
		return 0
	}
	off := uint64(uintptr(ivar) - uintptr(s.base))
	if off >= s.size || n > s.size-off {
		return 0
	}
	b, c := s.heap.Slice(int(off), int(off+n)), shmem.Cmp(cmp)
	var err error
	switch tc {
	case C.GS_I32:
		err = shmem.WaitUntil(s.p, shmem.SymAs[int32](b), c, *(*int32)(value))
	case C.GS_I64:
		err = shmem.WaitUntil(s.p, shmem.SymAs[int64](b), c, *(*int64)(value))
	case C.GS_U32:
		err = shmem.WaitUntil(s.p, shmem.SymAs[uint32](b), c, *(*uint32)(value))
	default:
		err = shmem.WaitUntil(s.p, shmem.SymAs[uint64](b), c, *(*uint64)(value))
	}
	if err != nil {
		die(op, err)
		return -1 // SHMEMX_ERRORS_RETURN: the wait returns, unsatisfied
	}
	return 1
}

// goshmem_bad_ivars reports op's error for a wait or test on
// [addr, addr+n), elements of width bytes, which the C side found
// misaligned or outside this PE's symmetric memory: the error says which
// (symWord, symOn), or that shmem_init has not been called.
//
//export goshmem_bad_ivars
func goshmem_bad_ivars(op *C.char, addr unsafe.Pointer, n, width C.size_t) {
	defer guard(op)
	s := world(op)
	_, err := s.symWord(addr, uint64(width), s.p.MyPE())
	if err == nil {
		_, err = s.symOn(addr, uint64(n), s.p.MyPE())
	}
	if err != nil {
		die(op, err)
	}
}
