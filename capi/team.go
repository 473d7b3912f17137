package main

/*
#include "gs.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/goshmem/shmem"
)

// Teams and contexts: C holds handles (state.go), Go the values.

func teamOf(op *C.char, t C.uintptr_t) (*state, *shmem.Team, error) {
	s := world(op)
	tm := s.team(t)
	if tm == nil {
		return s, nil, fmt.Errorf("%w: invalid team %#x", shmem.ErrInvalidArgument, uintptr(t))
	}
	return s, tm, nil
}

// queryTeam is t's team for the query routines, which answer -1 rather
// than abort: nil before Init or for an invalid handle.
func queryTeam(t C.uintptr_t) *shmem.Team {
	s := cur.Load()
	if s == nil {
		return nil
	}
	return s.team(t)
}

//export goshmem_team_query
func goshmem_team_query(t C.uintptr_t, npes C.int) C.int {
	defer guard(nil)
	tm := queryTeam(t)
	if tm == nil {
		return -1
	}
	if npes != 0 {
		return C.int(tm.NPEs())
	}
	return C.int(tm.MyPE())
}

// goshmem_team_num_contexts is the num_contexts the team was made with
// (0 for the predefined teams), or -1 for an invalid team.
//
//export goshmem_team_num_contexts
func goshmem_team_num_contexts(t C.uintptr_t) C.int {
	defer guard(nil)
	tm := queryTeam(t)
	if tm == nil {
		return -1
	}
	cfg, err := tm.GetConfig()
	if err != nil {
		return -1
	}
	return C.int(cfg.NumContexts)
}

//export goshmem_team_translate
func goshmem_team_translate(src C.uintptr_t, pe C.int, dst C.uintptr_t) C.int {
	defer guard(nil)
	s := cur.Load()
	if s == nil {
		return -1
	}
	a, b := s.team(src), s.team(dst)
	if a == nil || b == nil || pe < 0 || int(pe) >= a.NPEs() {
		return -1
	}
	return C.int(a.TranslatePE(int(pe), b))
}

func newTeam(t *shmem.Team) C.uintptr_t {
	if t == nil {
		return 0 // SHMEM_TEAM_INVALID: this PE is not a member
	}
	return C.uintptr_t(teamTab.add(t))
}

// teamConfigs turns the C side's configs (numContexts[i] for each of n
// teams, present when given is nonzero) into the split's optional configs:
// none when the program gave none, so that the split is the same call as
// without them.
func teamConfigs(given C.int, numContexts ...C.int) []shmem.TeamConfig {
	if given == 0 {
		return nil
	}
	cfg := make([]shmem.TeamConfig, len(numContexts))
	for i, n := range numContexts {
		cfg[i].NumContexts = int(n)
	}
	return cfg
}

//export goshmem_team_split_strided
func goshmem_team_split_strided(op *C.char, parent C.uintptr_t, start, stride, size, given, numContexts C.int, out *C.uintptr_t) C.int {
	defer guard(op)
	*out = 0
	_, tm, err := teamOf(op, parent)
	if err != nil {
		return fail(op, err)
	}
	nt, err := tm.SplitStrided(int(start), int(stride), int(size), teamConfigs(given, numContexts)...)
	if err != nil {
		return fail(op, err)
	}
	*out = newTeam(nt)
	return 0
}

//export goshmem_team_split_2d
func goshmem_team_split_2d(op *C.char, parent C.uintptr_t, xrange, given, xContexts, yContexts C.int, x, y *C.uintptr_t) C.int {
	defer guard(op)
	*x, *y = 0, 0
	_, tm, err := teamOf(op, parent)
	if err != nil {
		return fail(op, err)
	}
	xt, yt, err := tm.Split2D(int(xrange), teamConfigs(given, xContexts, yContexts)...)
	if err != nil {
		return fail(op, err)
	}
	*x, *y = newTeam(xt), newTeam(yt)
	return 0
}

//export goshmem_team_sync
func goshmem_team_sync(op *C.char, t C.uintptr_t) C.int {
	defer guard(op)
	_, tm, err := teamOf(op, t)
	if err == nil {
		err = tm.Sync()
	}
	if err != nil {
		return fail(op, err)
	}
	return 0
}

//export goshmem_team_destroy
func goshmem_team_destroy(op *C.char, t C.uintptr_t) {
	defer guard(op)
	if t == teamWorld || t == teamShared || t == 0 {
		return // the predefined teams outlive the program's use of them
	}
	_, tm, err := teamOf(op, t)
	if err == nil {
		err = tm.Destroy()
	}
	if err != nil {
		die(op, err)
		return
	}
	teamTab.del(uintptr(t))
}

//export goshmem_ctx_create
func goshmem_ctx_create(op *C.char, team C.uintptr_t, out *C.uintptr_t) C.int {
	defer guard(op)
	*out = 0
	s, _, err := teamOf(op, team)
	if err != nil {
		return fail(op, err)
	}
	p, err := s.p.CreateCtx()
	if err != nil {
		return fail(op, err)
	}
	h, ok := ctxTab.addIn(&ctxEntry{p: p, team: uintptr(team)}, ctxDefault+1, C.GS_MAX_CTX)
	if !ok {
		_ = p.Destroy()
		return fail(op, fmt.Errorf("%w: %d contexts are live, as many as libgoshmem holds: destroy one first",
			shmem.ErrOutOfMemory, C.GS_MAX_CTX-ctxDefault-1))
	}
	*out = C.uintptr_t(h)
	return 0
}

//export goshmem_ctx_destroy
func goshmem_ctx_destroy(op *C.char, ctx C.uintptr_t) {
	defer guard(op)
	if ctx == ctxDefault || ctx == 0 {
		return
	}
	e, ok := ctxTab.get(uintptr(ctx))
	if !ok {
		die(op, fmt.Errorf("%w: invalid context %#x", shmem.ErrInvalidArgument, uintptr(ctx)))
		return
	}
	ctxTab.del(uintptr(ctx))
	if err := e.p.Destroy(); err != nil {
		die(op, err)
	}
}

//export goshmem_ctx_team
func goshmem_ctx_team(ctx C.uintptr_t) C.uintptr_t {
	defer guard(nil)
	if e, ok := ctxTab.get(uintptr(ctx)); ok {
		return C.uintptr_t(e.team)
	}
	return 0
}

//export goshmem_coll
func goshmem_coll(op *C.char, kind C.int, t C.uintptr_t, dest, src unsafe.Pointer, n C.size_t, root C.int) C.int {
	defer guard(op)
	s, tm, err := teamOf(op, t)
	if err != nil {
		return fail(op, err)
	}
	// A collect's count may be 0 on some members only: they must still
	// take part (the others wait for them), with an empty source.
	if n == 0 && kind != C.GS_COLLECT {
		return 0
	}
	nb := uint64(n)
	npes := uint64(tm.NPEs())
	srcLen := nb
	if kind == C.GS_ALLTOALL {
		srcLen = nb * npes
	}
	sv := s.heap.Slice(0, 0)
	if srcLen > 0 {
		if sv, err = s.sym(src, srcLen); err != nil {
			return fail(op, err)
		}
	}
	switch kind {
	case C.GS_BCAST:
		var d shmem.Sym[uint8]
		if d, err = s.sym(dest, nb); err == nil {
			err = shmem.Broadcast(tm, d, sv, int(root))
		}
	case C.GS_FCOLLECT:
		var d shmem.Sym[uint8]
		if d, err = s.sym(dest, nb*npes); err == nil {
			err = shmem.FCollect(tm, d, sv)
		}
	case C.GS_ALLTOALL:
		var d shmem.Sym[uint8]
		if d, err = s.sym(dest, nb*npes); err == nil {
			err = shmem.Alltoall(tm, d, sv)
		}
	case C.GS_COLLECT:
		err = collect(s, tm, dest, sv)
	}
	if err != nil {
		return fail(op, err)
	}
	return 0
}

// collect learns the total size first (an fcollect of every PE's byte
// count into the sys area), since the C call does not say it and
// goshmem's Collect checks dest against it.
func collect(s *state, tm *shmem.Team, dest unsafe.Pointer, src shmem.Sym[uint8]) error {
	npes := tm.NPEs()
	counts := s.heap.Slice(int(s.sys), int(s.sys)+8*(npes+1))
	mine := shmem.SymAs[uint64](counts.Slice(0, 8))
	all := shmem.SymAs[uint64](counts.Slice(8, 8*(npes+1)))
	mine.Local(s.p)[0] = uint64(src.Len())
	if err := shmem.FCollect(tm, all, mine); err != nil {
		return err
	}
	var total uint64
	for _, c := range all.Local(s.p) {
		total += c
	}
	if total == 0 {
		return nil // every member knows it: no member goes on to Collect
	}
	d, err := s.sym(dest, total)
	if err != nil {
		return err
	}
	return shmem.Collect(tm, d.Slice(0, int(total)), src)
}

//export goshmem_alltoalls
func goshmem_alltoalls(op *C.char, t C.uintptr_t, dest, src unsafe.Pointer, dst, sst C.ptrdiff_t, n, esize C.size_t) C.int {
	defer guard(op)
	s, tm, err := teamOf(op, t)
	if err != nil {
		return fail(op, err)
	}
	if n == 0 {
		return 0
	}
	if dst < 1 || sst < 1 {
		return fail(op, fmt.Errorf("%w: strides must be positive", shmem.ErrInvalidArgument))
	}
	ds, ss, cnt, np := int(dst), int(sst), int(n), tm.NPEs()
	switch esize {
	case 1:
		err = alltoalls[uint8](s, tm, dest, src, ds, ss, cnt, np)
	case 2:
		err = alltoalls[uint16](s, tm, dest, src, ds, ss, cnt, np)
	case 4:
		err = alltoalls[uint32](s, tm, dest, src, ds, ss, cnt, np)
	case 8:
		err = alltoalls[uint64](s, tm, dest, src, ds, ss, cnt, np)
	case 16:
		err = alltoalls[uint64](s, tm, dest, src, 2*ds, 2*ss, cnt, np)
		if err == nil {
			err = alltoalls[uint64](s, tm, unsafe.Add(dest, 8), unsafe.Add(src, 8), 2*ds, 2*ss, cnt, np)
		}
	default:
		err = fmt.Errorf("%w: element size %d", shmem.ErrInvalidArgument, esize)
	}
	if err != nil {
		return fail(op, err)
	}
	return 0
}

func alltoalls[T uint8 | uint16 | uint32 | uint64](s *state, tm *shmem.Team, dest, src unsafe.Pointer, ds, ss, n, npes int) error {
	var z T
	w := int(unsafe.Sizeof(z))
	d, err := s.sym(dest, uint64(((n*npes-1)*ds+1)*w))
	if err != nil {
		return err
	}
	sv, err := s.sym(src, uint64(((n*npes-1)*ss+1)*w))
	if err != nil {
		return err
	}
	return shmem.Alltoalls(tm, shmem.SymAs[T](d), shmem.SymAs[T](sv), ds, ss, n)
}

//export goshmem_reduce
func goshmem_reduce(op *C.char, t C.uintptr_t, tc, rop C.int, dest, src unsafe.Pointer, n C.size_t) C.int {
	defer guard(op)
	s, tm, err := teamOf(op, t)
	if err != nil {
		return fail(op, err)
	}
	if n == 0 {
		return 0
	}
	o, c := shmem.Op(rop), int(n)
	switch tc {
	case C.GS_I8:
		err = reduce[int8](s, tm, o, dest, src, c)
	case C.GS_I16:
		err = reduce[int16](s, tm, o, dest, src, c)
	case C.GS_I32:
		err = reduce[int32](s, tm, o, dest, src, c)
	case C.GS_I64:
		err = reduce[int64](s, tm, o, dest, src, c)
	case C.GS_U8:
		err = reduce[uint8](s, tm, o, dest, src, c)
	case C.GS_U16:
		err = reduce[uint16](s, tm, o, dest, src, c)
	case C.GS_U32:
		err = reduce[uint32](s, tm, o, dest, src, c)
	case C.GS_U64:
		err = reduce[uint64](s, tm, o, dest, src, c)
	case C.GS_F32:
		err = reduce[float32](s, tm, o, dest, src, c)
	case C.GS_F64:
		err = reduce[float64](s, tm, o, dest, src, c)
	default:
		err = fmt.Errorf("%w: type code %d", shmem.ErrInvalidArgument, tc)
	}
	if err != nil {
		return fail(op, err)
	}
	return 0
}

func reduce[T shmem.Elem](s *state, tm *shmem.Team, o shmem.Op, dest, src unsafe.Pointer, n int) error {
	var z T
	w := uint64(unsafe.Sizeof(z))
	d, err := s.sym(dest, uint64(n)*w)
	if err != nil {
		return err
	}
	sv, err := s.sym(src, uint64(n)*w)
	if err != nil {
		return err
	}
	return shmem.Reduce(tm, o, shmem.SymAs[T](d), shmem.SymAs[T](sv))
}
