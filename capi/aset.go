package main

/*
#include "gs.h"
*/
import "C"

import (
	"unsafe"

	"github.com/goshmem/shmem"
)

// goshmem_aset_barrier runs aset.c's barrier protocol for an active set
// with a member this PE does not map: the same words and values, but every
// write goes through goshmem, so each one rings its target's bell, and the
// waits run in Go, where they yield to the network reader that lands the
// writes. A set whose members are all mapped runs the protocol in C
// (aset_barrier), with C atomics that ring nothing; both sides of one set
// always choose alike, since PEs map exactly the PEs of their own host.
//
//export goshmem_aset_barrier
func goshmem_aset_barrier(op *C.char, arrive, release unsafe.Pointer, epoch C.uint64_t, start, stride, size C.int) {
	defer guard(op)
	s := world(op)
	me := s.p.MyPE()
	a, err := s.symOn(arrive, 8, me)
	if err == nil {
		var r shmem.Sym[uint8]
		if r, err = s.symOn(release, 8, me); err == nil {
			err = asetBarrier(s.p, shmem.SymAs[uint64](a), shmem.SymAs[uint64](r), uint64(epoch), int(start), int(stride), int(size))
		}
	}
	if err != nil {
		die(op, err)
	}
}

// asetBarrier is one barrier of the active set {start + i*stride : i <
// size}: every member adds 1 to the first member's arrive word and waits
// until that member, having counted epoch*size arrivals, sets its release
// word to epoch. The quiet first completes the caller's earlier writes, as
// a barrier must.
func asetBarrier(p *shmem.PE, arrive, release shmem.Sym[uint64], epoch uint64, start, stride, size int) error {
	if err := p.Quiet(); err != nil {
		return err
	}
	if err := shmem.AtomicAdd(p, arrive, 1, start); err != nil {
		return err
	}
	if p.MyPE() != start {
		return shmem.WaitUntil(p, release, shmem.CmpGE, epoch)
	}
	if err := shmem.WaitUntil(p, arrive, shmem.CmpGE, epoch*uint64(size)); err != nil {
		return err
	}
	for i := 1; i < size; i++ {
		if err := shmem.AtomicSet(p, release, epoch, start+i*stride); err != nil {
			return err
		}
	}
	return nil
}
