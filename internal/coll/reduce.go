package coll

import (
	"github.com/goshmem/shmem/transport"
)

// Kernel is a reduction's operator on byte views of its elements: Combine
// folds src into dst element-wise (dst = dst op src); both hold the same
// whole number of elements. It must be commutative so that every member,
// combining in its own order, gets the same bits. An interface, not a
// func: package shmem's kernels are zero-size types, which become a
// Kernel without allocating, where the value of a generic function is a
// closure over its dictionary, made on every call.
type Kernel interface {
	Combine(dst, src []byte)
}

// ringBuffers is how many scratch buffers the ring reduce-scatter cycles
// through: a sender may run this many chunks ahead of its receiver before
// it waits for an acknowledgement.
const ringBuffers = 4

// Reduce combines every member's nbytes at srcOff with f and leaves the
// result at dstOff on every member (shmem_*_reduce, an all-reduce). srcOff
// may equal dstOff (in place). Messages that fit the scratch use recursive
// doubling (log2 n rounds; a team that is not a power of two first folds
// its extra members into partners and hands them the result at the end).
// Larger ones use a ring reduce-scatter pipelined through the scratch in
// chunks, then a ring allgather straight into the destinations: each
// member sends about 2·nbytes whatever n is, and scratch use stays at
// ScratchBytes.
func (t *Team) Reduce(a Args, dstOff, srcOff uint64, nbytes int, f Kernel) error {
	return named("Reduce", t.reduce(a, dstOff, srcOff, nbytes, f))
}

// reduce is Reduce, its errors as its steps returned them (see named).
func (t *Team) reduce(a Args, dstOff, srcOff uint64, nbytes int, f Kernel) (err error) {
	const op = "Reduce"
	seq, end, err := t.lockedBegin(op, &a)
	defer end.unlock(&err)
	if err != nil || nbytes == 0 {
		return err
	}
	local := t.local
	if dstOff != srcOff {
		copy(local[dstOff:dstOff+uint64(nbytes)], local[srcOff:srcOff+uint64(nbytes)])
	}
	n := len(t.members)
	if n == 1 {
		return nil
	}
	levels := 1
	for d := 1; d < n; d <<= 1 {
		levels++
	}
	region := ScratchBytes / levels / a.Elem * a.Elem
	if nbytes <= region {
		return t.reduceDoubling(op, seq, dstOff, nbytes, region, f)
	}
	return t.reduceRing(op, seq, dstOff, nbytes, a.Elem, f)
}

// reduceDoubling is recursive doubling over the largest power of two p2 ≤ n.
// The first 2r members (r = n - p2) pair up: the even one sends its data to
// the odd one and sits out until the odd one sends it the result. Each
// exchange lands in its own scratch region, so a partner that runs ahead
// never overwrites data not yet combined.
func (t *Team) reduceDoubling(op string, seq uint64, dst uint64, nbytes, region int, f Kernel) error {
	n, me := len(t.members), t.me
	p2 := 1
	for p2*2 <= n {
		p2 *= 2
	}
	r := n - p2
	local := t.local
	mine := local[dst : dst+uint64(nbytes)]
	regionAt := func(k int) uint64 { return t.l.scratch + uint64(k*region) }
	const postStep = 1 << 20
	if me < 2*r && me%2 == 0 {
		if err := t.putSig(op, me+1, regionAt(0), mine, enc(seq, 1)); err != nil {
			return err
		}
		return t.waitFrom(op, me+1, seq, postStep)
	}
	if me < 2*r {
		if err := t.waitFrom(op, me-1, seq, 1); err != nil {
			return err
		}
		f.Combine(mine, local[regionAt(0):regionAt(0)+uint64(nbytes)])
	}
	nr := me - r
	if me < 2*r {
		nr = me / 2
	}
	real := func(x int) int {
		if x < r {
			return 2*x + 1
		}
		return x + r
	}
	for k, mask := 0, 1; mask < p2; k, mask = k+1, mask<<1 {
		partner := real(nr ^ mask)
		at := regionAt(k + 1)
		if err := t.putSig(op, partner, at, mine, enc(seq, k+2)); err != nil {
			return err
		}
		if err := t.waitFrom(op, partner, seq, k+2); err != nil {
			return err
		}
		f.Combine(mine, local[at:at+uint64(nbytes)])
	}
	if me < 2*r {
		return t.putSig(op, me-1, dst, mine, enc(seq, postStep))
	}
	return nil
}

// reduceRing is the ring reduce-scatter then ring allgather. Block b
// (elements b·count/n up to (b+1)·count/n) is reduced along the ring
// starting at member b and ends complete on member b-1. Chunks travel
// through the receiver's scratch in ringBuffers buffers; the receiver
// acknowledges each chunk it has combined so the sender can reuse its
// buffer.
func (t *Team) reduceRing(op string, seq uint64, dst uint64, nbytes, elem int, f Kernel) error {
	n, me := len(t.members), t.me
	right, left := (me+1)%n, (me-1+n)%n
	local := t.local
	count := nbytes / elem
	blockLo := func(b int) int { return b * count / n * elem }
	blockHi := func(b int) int { return (b + 1) * count / n * elem }
	chunk := ScratchBytes / ringBuffers / elem * elem
	chunks := func(b int) int { return max(1, (blockHi(b)-blockLo(b)+chunk-1)/chunk) }
	rpath, err := t.rt.Path(op, t.members[right])
	if err != nil {
		return err
	}
	lpath, err := t.rt.Path(op, t.members[left])
	if err != nil {
		return err
	}
	sent, got := 0, 0
	for s := 0; s < n-1; s++ {
		sb, rb := (me-s+n)%n, (me-1-s+2*n)%n
		ns, nr := chunks(sb), chunks(rb)
		for c := 0; c < max(ns, nr); c++ {
			if c < ns {
				if sent >= ringBuffers {
					if err := t.waitWord(op, t.ackWord(right), enc(seq, sent-ringBuffers+1)); err != nil {
						return err
					}
				}
				lo := blockLo(sb) + c*chunk
				hi := min(blockHi(sb), lo+chunk)
				buf := t.l.scratch + uint64(sent%ringBuffers*chunk)
				data := local[dst+uint64(lo) : dst+uint64(hi)]
				t.rt.Fence() // signals to right only grow (see putSig)
				if err := rpath.PutSignal(buf, data, t.sigWord(me), enc(seq, sent+1), transport.SignalSet); err != nil {
					return err
				}
				sent++
			}
			if c < nr {
				if err := t.waitFrom(op, left, seq, got+1); err != nil {
					return err
				}
				lo := blockLo(rb) + c*chunk
				hi := min(blockHi(rb), lo+chunk)
				buf := t.l.scratch + uint64(got%ringBuffers*chunk)
				f.Combine(local[dst+uint64(lo):dst+uint64(hi)], local[buf:buf+uint64(hi-lo)])
				got++
				t.rt.Fence() // acks to left only grow
				if err := lpath.AtomicPost(transport.AtomicSet, 8, t.ackWord(me), enc(seq, got)); err != nil {
					return err
				}
			}
		}
	}
	for s := 0; s < n-1; s++ {
		sb := (me + 1 - s + n) % n
		lo, hi := dst+uint64(blockLo(sb)), dst+uint64(blockHi(sb))
		t.rt.Fence()
		if err := rpath.PutSignal(lo, local[lo:hi], t.sigWord(me), enc(seq, sent+s+1), transport.SignalSet); err != nil {
			return err
		}
		if err := t.waitFrom(op, left, seq, got+s+1); err != nil {
			return err
		}
	}
	return nil
}
