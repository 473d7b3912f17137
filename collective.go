package shmem

import (
	"github.com/goshmem/shmem/internal/core"
	"reflect"

	"github.com/goshmem/shmem/internal/coll"
	"github.com/goshmem/shmem/internal/errs"
)

// The collectives below are collective over a team: every member calls
// them in the same order with the same arguments (the same Syms, counts,
// root, operator and strides). The first step of each compares the
// members' arguments, so a mismatch, or a member whose own checks fail,
// gives ErrInvalidArgument on every member and moves no data. There is no
// barrier needed between two collectives: internal signals carry the
// call's sequence number. Counts come from Sym lengths (see API.md).

// teamPE returns the PE behind t.
func teamPE(t *Team, op string) (*PE, error) {
	if t == nil || t.p == nil {
		return nil, nilTeam(op)
	}
	return t.p, nil
}

// typeCode identifies T among Elem types for the argument comparison.
func typeCode[T Elem]() uint64 {
	switch any(*new(T)).(type) {
	case Float16:
		return 1 << 8
	case BFloat16:
		return 2 << 8
	}
	return uint64(reflect.TypeFor[T]().Kind())
}

// argCheck collects the first failure of a member's own argument checks.
type argCheck struct {
	p   *PE
	op  string
	err error
}

func (c *argCheck) off(first uint64, err error) uint64 {
	if c.err == nil && err != nil {
		c.err = err
	}
	return first
}

func (c *argCheck) fail(format string, args ...any) {
	if c.err == nil {
		c.err = errs.New(c.op, c.p.MyPE(), errs.NoPE, errs.ErrInvalidArgument, format, args...)
	}
}

// overlap reports whether byte ranges [a, a+an) and [b, b+bn) share a byte.
func overlap(a uint64, an int, b uint64, bn int) bool {
	return an > 0 && bn > 0 && a < b+uint64(bn) && b < a+uint64(an)
}

// Broadcast copies src.Len() elements of root's src into dst on every
// member of t, root included (shmem_broadcast). root is a number in t;
// dst may be src (in place).
func Broadcast[T Elem](t *Team, dst, src Sym[T], root int) error {
	const op = "Broadcast"
	p, err := teamPE(t, op)
	if err != nil {
		return err
	}
	if t0, ok := p.c.CollStart(); ok {
		defer p.c.CollDone(core.CollBroadcast, t0)
	}
	n, size := src.n, int(elemSize[T]())
	c := argCheck{p: p, op: op}
	srcOff := c.off(src.check(p, op, errs.NoPE, 0, n))
	dstOff := c.off(dst.check(p, op, errs.NoPE, 0, n))
	if root < 0 || root >= t.NPEs() {
		c.fail("root %d is not in a team of %d", root, t.NPEs())
	}
	if srcOff != dstOff && overlap(srcOff, n*size, dstOff, n*size) {
		c.fail("source and destination overlap without being the same")
	}
	a := coll.Args{Kind: coll.KindBroadcast, Type: typeCode[T](), Elem: size, Count: n, Root: root, DstOff: dst.off, DstLen: dst.n, Err: c.err}
	return t.t.Broadcast(a, dstOff, srcOff, n*size)
}

// FCollect concatenates every member's src (the same length on all) into
// dst in team order (shmem_fcollect); dst.Len() must be at least
// t.NPEs()·src.Len(), and dst and src must not overlap.
func FCollect[T Elem](t *Team, dst, src Sym[T]) error {
	const op = "FCollect"
	p, err := teamPE(t, op)
	if err != nil {
		return err
	}
	if t0, ok := p.c.CollStart(); ok {
		defer p.c.CollDone(core.CollFCollect, t0)
	}
	n, size, np := src.n, int(elemSize[T]()), t.NPEs()
	c := argCheck{p: p, op: op}
	srcOff := c.off(src.check(p, op, errs.NoPE, 0, n))
	if dst.n/max(np, 1) < n {
		c.fail("destination of %d elements cannot hold %d × %d", dst.n, np, n)
	}
	dstOff := c.off(dst.check(p, op, errs.NoPE, 0, min(dst.n, n*np)))
	if overlap(srcOff, n*size, dstOff, n*np*size) {
		c.fail("source and destination overlap")
	}
	a := coll.Args{Kind: coll.KindFCollect, Type: typeCode[T](), Elem: size, Count: n, DstOff: dst.off, DstLen: dst.n, Err: c.err}
	return t.t.FCollect(a, dstOff, srcOff, n*size)
}

// Collect concatenates every member's src into dst in team order
// (shmem_collect); members may contribute different lengths, zero
// included. dst.Len() must be at least the total, and dst and src must not
// overlap.
func Collect[T Elem](t *Team, dst, src Sym[T]) error {
	const op = "Collect"
	p, err := teamPE(t, op)
	if err != nil {
		return err
	}
	if t0, ok := p.c.CollStart(); ok {
		defer p.c.CollDone(core.CollCollect, t0)
	}
	n, size := src.n, int(elemSize[T]())
	c := argCheck{p: p, op: op}
	srcOff := c.off(src.check(p, op, errs.NoPE, 0, n))
	dstOff := c.off(dst.check(p, op, errs.NoPE, 0, dst.n))
	if overlap(srcOff, n*size, dstOff, dst.n*size) {
		c.fail("source and destination overlap")
	}
	a := coll.Args{Kind: coll.KindCollect, Type: typeCode[T](), Elem: size, DstOff: dst.off, DstLen: dst.n, Err: c.err}
	return t.t.Collect(a, dstOff, dst.n*size, srcOff, n*size)
}

// Alltoall sends block j of every member's src to member j, which stores
// the block from member i as its dst block i (shmem_alltoall). Blocks are
// src.Len()/t.NPEs() elements, and src.Len() must be a multiple of
// t.NPEs() (else ErrInvalidArgument on every member: a remainder would be
// lost); dst.Len() must be at least src.Len(), and
// dst and src must not overlap.
func Alltoall[T Elem](t *Team, dst, src Sym[T]) error {
	const op = "Alltoall"
	p, err := teamPE(t, op)
	if err != nil {
		return err
	}
	if t0, ok := p.c.CollStart(); ok {
		defer p.c.CollDone(core.CollAlltoall, t0)
	}
	np, size := t.NPEs(), int(elemSize[T]())
	block := src.n / max(np, 1)
	c := argCheck{p: p, op: op}
	if np > 0 && src.n%np != 0 {
		// A remainder would be dropped silently: every PE must send the
		// same whole block to each member.
		c.fail("source of %d elements is not a multiple of the team's %d PEs", src.n, np)
	}
	srcOff := c.off(src.check(p, op, errs.NoPE, 0, block*np))
	if dst.n < block*np {
		c.fail("destination of %d elements cannot hold %d blocks of %d", dst.n, np, block)
	}
	dstOff := c.off(dst.check(p, op, errs.NoPE, 0, min(dst.n, block*np)))
	if overlap(srcOff, block*np*size, dstOff, block*np*size) {
		c.fail("source and destination overlap")
	}
	a := coll.Args{Kind: coll.KindAlltoall, Type: typeCode[T](), Elem: size, Count: block, DstOff: dst.off, DstLen: dst.n, Err: c.err}
	return t.t.Alltoall(a, dstOff, srcOff, block*size)
}

// Alltoalls is Alltoall with strides in elements (shmem_alltoalls): n
// elements go to each member, element k of member j's block taken from
// src[srcStride·(j·n+k)] and stored at dst[dstStride·(i·n+k)] of member j
// for sender i. Elements between the strided places are left untouched.
// Strides are at least 1, and dst and src must not overlap.
func Alltoalls[T Elem](t *Team, dst, src Sym[T], dstStride, srcStride, n int) error {
	const op = "Alltoalls"
	p, err := teamPE(t, op)
	if err != nil {
		return err
	}
	if t0, ok := p.c.CollStart(); ok {
		defer p.c.CollDone(core.CollAlltoalls, t0)
	}
	np, size := t.NPEs(), int(elemSize[T]())
	c := argCheck{p: p, op: op}
	if n < 0 || dstStride < 1 || srcStride < 1 {
		c.fail("count %d, strides %d and %d (count >= 0, strides >= 1)", n, dstStride, srcStride)
		n = 0
	}
	span := func(stride int) int {
		if n == 0 {
			return 0
		}
		return stride*(np*n-1) + 1
	}
	ds, ss := span(dstStride), span(srcStride)
	if ds > dst.n || ss > src.n || ds < 0 || ss < 0 {
		c.fail("%d elements per PE at strides %d/%d overrun lengths %d/%d", n, dstStride, srcStride, dst.n, src.n)
		ds, ss, n = 0, 0, 0
	}
	srcOff := c.off(src.check(p, op, errs.NoPE, 0, ss))
	dstOff := c.off(dst.check(p, op, errs.NoPE, 0, ds))
	if overlap(srcOff, ss*size, dstOff, ds*size) {
		c.fail("source and destination overlap")
	}
	a := coll.Args{Kind: coll.KindAlltoalls, Type: typeCode[T](), Elem: size, Count: n, DStride: dstStride, SStride: srcStride,
		DstOff: dst.off, DstLen: dst.n, Err: c.err}
	return t.t.Alltoalls(a, dstOff, srcOff)
}
