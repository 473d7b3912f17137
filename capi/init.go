package main

/*
#include <stdlib.h>
#include "gs.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"unsafe"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/bootstrap"
	"github.com/goshmem/shmem/internal/errs"
)

// preInit is what the aclshmemx_* calls configure before init.
type preInit struct {
	uid       *shmem.UniqueID
	rank      int
	npes      int
	heap      int64
	tls       []shmem.Option
	initiated bool // set at init: aclshmemx_set_conf_store_tls is refused from then on
}

// sysArea is the library's own symmetric memory at the start of the C
// heap, in uint64 words: the team collect's counts (npes+1), the active-set
// collect's counts (npes), the active-set barrier's arrive and release
// counters (64 each; aset.c addresses these four), the allocation
// check's 8 words (agree), and the words where each PE publishes its
// statics for same-host peers (statics.c).
func sysArea(npes int) uint64 {
	return (8*uint64(2*npes+1+2*64+agreeWords+C.GS_DINFO_WORDS) + 4095) &^ 4095
}

// staticsOff is the byte offset of the statics' words in the sys area.
func staticsOff(npes int) int { return agreeOff(npes) + 8*agreeWords }

// agreeOff is the byte offset of agree's words in the sys area.
func agreeOff(npes int) int { return 8 * (2*npes + 1 + 2*64) }

const agreeWords = 8

// heapSlack is goshmem's own use of its heap (team resources, collective
// scratch) beside the C heap.
func heapSlack(user int64) int64 { return 8<<20 + user/8 }

//export goshmem_init
func goshmem_init(op *C.char) C.int {
	defer guard(op)
	setup.Lock()
	defer setup.Unlock()
	if cur.Load() != nil {
		return 0 // OpenSHMEM: later calls have no effect
	}
	user, err := userHeap()
	if err != nil {
		return fail(op, err)
	}
	// Every call comes from a C thread, locked to its goroutine.
	opts := append([]shmem.Option{shmem.WithHeapSize(user + heapSlack(user)), shmem.WithLockedCallers()}, pre.tls...)
	if pre.uid != nil {
		opts = append(opts, shmem.WithUniqueID(*pre.uid, pre.rank, pre.npes))
	}
	// The statics become shared memory before the world starts, whose
	// network listener serves them to peers not on this host.
	var staticsSize C.size_t
	if base := C.gs_statics_prepare(&staticsSize); base != nil {
		opts = append(opts, shmem.WithStatics(unsafe.Slice((*byte)(unsafe.Pointer(base)), int(staticsSize))),
			shmem.WithStaticsLayout(uint64(C.gs_statics_layout())))
	}
	pre.initiated = true
	p, err := shmem.Init(context.Background(), opts...)
	if err != nil {
		return fail(op, err)
	}
	// Page-aligned, as C programs expect of heap memory.
	heap, err := shmem.Align[uint8](p, 4096, int(user))
	if err != nil {
		_ = p.Finalize()
		return fail(op, err)
	}
	local := heap.Local(p)
	n := p.NPEs()
	// C keeps the peer table: one address per PE, NULL where not mapped.
	peers := (*[1 << 30]*C.char)(C.calloc(C.size_t(n), C.size_t(unsafe.Sizeof(uintptr(0)))))[:n:n]
	mapped := false // some peer is: the unmapper has work
	for pe := 0; pe < n; pe++ {
		if v, ok := shmem.Ptr(p, heap, pe); ok && len(v) == len(local) {
			peers[pe] = (*C.char)(unsafe.Pointer(unsafe.SliceData(v)))
			mapped = mapped || pe != p.MyPE()
		}
	}
	s := &state{p: p, heap: heap, base: unsafe.Pointer(unsafe.SliceData(local)), size: uint64(user), sys: 0}
	s.statics, _ = p.Statics()
	heapAllo = newAllocator(uint64(uintptr(s.base)), sysArea(n), uint64(user))
	clear(local[:sysArea(n)])
	// Same-host peers read the published words after the barrier below.
	C.gs_statics_local(unsafe.Pointer(&local[staticsOff(n)]))
	ctxTab.reset()
	ctxTab.set(ctxDefault, &ctxEntry{p: p, team: teamWorld})
	teamTab.reset()
	teamTab.set(teamWorld, p.TeamWorld())
	teamTab.set(teamShared, p.TeamShared())
	C.gs_setup((*C.char)(s.base), C.size_t(user), &peers[0], C.int(p.MyPE()), C.int(n))
	cur.Store(s)
	// No PE may address the sys area before every PE has cleared it.
	if err := p.BarrierAll(); err != nil {
		return fail(op, err)
	}
	// Every PE has published its statics' words: map the peers'. A put
	// into a peer's statics needs nothing of that peer but its memfd,
	// which exists since it published, so no second barrier.
	if msg := C.gs_statics_map(C.size_t(staticsOff(n))); msg != nil {
		return fail(op, fmt.Errorf("%w: %s", shmem.ErrInvalidArgument, C.GoString(msg)))
	}
	if mapped {
		s.unmap = startUnmapper(p)
	}
	return 0
}

// userHeap is the C heap size: aclshmemx's local_mem_size, else
// SHMEM_SYMMETRIC_SIZE, else goshmem's default.
func userHeap() (int64, error) {
	if pre.heap > 0 {
		return pre.heap, nil
	}
	v := os.Getenv("SHMEM_SYMMETRIC_SIZE")
	if v == "" {
		return shmem.DefaultHeapSize, nil
	}
	n, err := parseSize(v)
	if err != nil {
		return 0, fmt.Errorf("%w: SHMEM_SYMMETRIC_SIZE=%q: %v", shmem.ErrInvalidArgument, v, err)
	}
	return n, nil
}

// parseSize reads a heap size as shmemrun and the Go API do
// (bootstrap.ParseSize: OpenSHMEM's syntax), and bounds it to what a heap
// can be.
func parseSize(v string) (int64, error) {
	n, err := bootstrap.ParseSize(v)
	if err != nil {
		return 0, err
	}
	if n <= 0 || n > 1<<50 {
		return 0, errors.New("not a heap size (1 byte to 1 PiB)")
	}
	return n, nil
}

//export goshmem_finalize
func goshmem_finalize(op *C.char) {
	defer guard(op)
	setup.Lock()
	defer setup.Unlock()
	s := cur.Load()
	if s == nil {
		return
	}
	cur.Store(nil)
	if s.unmap != nil {
		s.unmap.end()
	}
	C.gs_setup(nil, 0, nil, 0, 0)
	C.gs_statics_fini(C.int(s.p.NPEs()))
	if err := s.p.Finalize(); err != nil {
		die(op, err)
	}
}

//export goshmem_global_exit
func goshmem_global_exit(status C.int) {
	defer guard(nil)
	if s := cur.Load(); s != nil {
		s.p.GlobalExit(int(status))
	}
}

//export goshmem_accessible
func goshmem_accessible(pe C.int) C.int {
	defer guard(nil)
	if s := cur.Load(); s != nil && s.p.Accessible(int(pe)) {
		return 1
	}
	return 0
}

// goshmem_statics_accessible reports whether the network carries this
// process's statics to pe (shmem_addr_accessible of a static that is not
// mapped from pe).
//
//export goshmem_statics_accessible
func goshmem_statics_accessible(pe C.int) C.int {
	defer guard(nil)
	if s := cur.Load(); s != nil && s.statics.Len() > 0 && shmem.AddrAccessible(s.p, s.statics, int(pe)) {
		return 1
	}
	return 0
}

// goshmem_check is a C wait's look, every millisecond, for what ends a Go
// wait: a failed PE, and with peers set (gs_pacer paces it) a global
// exit or every other PE having called Finalize, which reads every PE's
// state. It reports the first it finds as op's failure (which ends the
// program, or under SHMEMX_ERRORS_RETURN is recorded) and returns 1, so
// that the wait ends; 0 while the wait may still be satisfied.
//
//export goshmem_check
func goshmem_check(op *C.char, peers C.int) C.int {
	defer guard(op)
	s := world(op)
	if err := failedFirst(s, op); err != nil {
		die(op, err)
		return 1 // SHMEMX_ERRORS_RETURN: the wait returns
	}
	// The rest of what ends a Go wait: a global exit, and every other PE
	// having called Finalize (no one is left to write).
	if peers == 0 {
		return 0
	}
	if err := s.p.WaitCheck(C.GoString(op)); err != nil {
		die(op, err)
		return 1
	}
	return 0
}

// failedFirst is a C wait's account of a PE failure that ends it: "PE r
// failed while this PE waited (...)", r the PE this PE recorded failed
// first (the PEs that failed since are often its consequences: a C PE
// ends on its first error), a G of it giving goshmem's account; nil while
// no PE has failed.
func failedFirst(s *state, op *C.char) error {
	pe := -1
	for r := 0; r < s.p.NPEs(); r++ {
		if !s.p.Accessible(r) {
			pe = r
			break
		}
	}
	if pe < 0 {
		return nil
	}
	// A wait's check names the PE recorded failed first.
	var e *errs.Error
	if werr := s.p.WaitCheck(C.GoString(op)); errors.Is(werr, shmem.ErrPEFailed) && errors.As(werr, &e) &&
		e.Target >= 0 && e.Target < s.p.NPEs() && !s.p.Accessible(e.Target) {
		pe = e.Target
	}
	_, err := shmem.G(s.p, s.heap.Slice(0, 1), pe)
	if err == nil {
		err = shmem.ErrPEFailed
	}
	return fmt.Errorf("PE %d failed while this PE waited (%w)", pe, err)
}

// goshmem_alloc is the collective allocation behind shmem_malloc and its
// kin: count*size bytes (count is 1 but for calloc) aligned to align (a
// power of two; malloc's 1 means malloc's 16), zeroed when zero is set, or
// NULL with the reason recorded for shmemx_last_error, naming op: the
// entry point the program called. Every PE joins the agreement even when
// its own arguments are refused (a bad alignment, a count*size that
// overflows size_t), so that the others fail instead of waiting.
//
//export goshmem_alloc
func goshmem_alloc(op *C.char, count, size, align C.size_t, zero C.int) unsafe.Pointer {
	defer guard(op)
	s := world(op)
	hi, total := bits.Mul64(uint64(count), uint64(size))
	overflow := hi != 0 || total > uint64(^C.size_t(0))
	badAlign := align == 0 || align&(align-1) != 0
	var off uint64
	ok := false
	if !badAlign && !overflow {
		setup.Lock()
		off, ok = heapAllo.alloc(total, max(uint64(align), 16))
		setup.Unlock()
	}
	res := int64(off)
	if !ok {
		res = -1
	}
	if ok && zero != 0 {
		clear(s.heap.Slice(int(off), int(off+total)).Local(s.p))
	}
	// The spec's barrier (no PE uses the object before every PE has it),
	// which also checks that every PE asked for the same object.
	if err := agree(s, int64(total), res); err != nil {
		if ok {
			setup.Lock()
			heapAllo.release(off)
			setup.Unlock()
		}
		die(op, err)
		return nil
	}
	switch {
	case overflow:
		record(op, fmt.Errorf("%w: count %d times size %d overflows size_t", shmem.ErrInvalidArgument, count, size))
		return nil
	case badAlign:
		record(op, fmt.Errorf("%w: alignment %d is not a power of two", shmem.ErrInvalidArgument, align))
		return nil
	case !ok:
		record(op, fmt.Errorf("%w: %d bytes (SHMEM_SYMMETRIC_SIZE is %d)", shmem.ErrOutOfMemory, total, s.size))
		return nil
	}
	return unsafe.Add(s.base, off)
}

// agree is a barrier that also checks that every PE passed the same two
// values to a collective allocation call: C's allocator is deterministic,
// so a PE asking for another size (or freeing another object) would hand
// out different addresses on different PEs and corrupt memory. It is a
// max-reduction of (a, b, -a, -b) over the world after a quiet.
func agree(s *state, a, b int64) error {
	if err := s.p.Quiet(); err != nil {
		return err
	}
	off := agreeOff(s.p.NPEs())
	words := shmem.SymAs[int64](s.heap.Slice(off, off+8*agreeWords))
	src, dst := words.Slice(0, 4), words.Slice(4, 8)
	copy(src.Local(s.p), []int64{a, b, -a, -b})
	if err := shmem.Reduce(s.p.TeamWorld(), shmem.OpMax, dst, src); err != nil {
		return err
	}
	r := dst.Local(s.p)
	if r[0] != -r[2] || r[1] != -r[3] {
		return fmt.Errorf("%w: the PEs disagree (sizes or offsets from %d to %d and %d to %d): every PE must make the same calls",
			shmem.ErrInvalidArgument, -r[2], r[0], -r[3], r[1])
	}
	return nil
}

//export goshmem_free
func goshmem_free(op *C.char, ptr unsafe.Pointer) {
	defer guard(op)
	s := world(op)
	off := int64(uintptr(ptr) - uintptr(s.base))
	setup.Lock()
	_, live := heapAllo.sizeOf(uint64(off))
	setup.Unlock()
	// Every PE stops using the object before any PE reuses its memory, and
	// every PE frees the same object. A PE whose pointer is not a live
	// block still joins, so that the others fail instead of waiting, but
	// reports its own mistake rather than the disagreement it causes.
	err := agree(s, off, 0)
	if !live {
		die(op, fmt.Errorf("%w: %p was not returned by shmem_malloc (or was freed)", shmem.ErrInvalidArgument, ptr))
		return
	}
	if err != nil {
		die(op, err)
		return
	}
	setup.Lock()
	heapAllo.release(uint64(off))
	setup.Unlock()
}

//export goshmem_realloc
func goshmem_realloc(op *C.char, ptr unsafe.Pointer, size C.size_t) unsafe.Pointer {
	defer guard(op)
	s := world(op)
	old := uint64(uintptr(ptr) - uintptr(s.base))
	setup.Lock()
	osize, ok := heapAllo.sizeOf(old)
	setup.Unlock()
	if !ok {
		die(op, fmt.Errorf("%w: %p was not returned by shmem_malloc", shmem.ErrInvalidArgument, ptr))
		return nil
	}
	// Every PE has stopped using the old object before it moves, and
	// every PE moves the same object to the same size.
	if err := agree(s, int64(old), int64(size)); err != nil {
		die(op, err)
		return nil
	}
	setup.Lock()
	off, ok := heapAllo.alloc(uint64(size), 16)
	if ok {
		heapAllo.release(old)
	}
	setup.Unlock()
	if !ok {
		record(op, fmt.Errorf("%w: %d bytes", shmem.ErrOutOfMemory, size))
		return nil // the spec: the old object stays
	}
	local := s.heap.Local(s.p)
	copy(local[off:off+min(osize, uint64(size))], local[old:old+min(osize, uint64(size))])
	if err := s.p.BarrierAll(); err != nil {
		die(op, err)
	}
	return unsafe.Add(s.base, off)
}
