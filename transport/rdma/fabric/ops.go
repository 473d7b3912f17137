//go:build cgo && goshmem_fabric

package fabric

/*
#include "gf.h"
*/
import "C"

import (
	"encoding/binary"
	"time"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
)

// Atomic applies op at the peer and returns the word's previous value. Like
// Get it first completes this PE's earlier writes to the peer.
func (p *path) Atomic(op transport.AtomicOp, width int, off uint64, operand, cond uint64) (uint64, error) {
	if err := p.checkAtomic(op, width, off, "Atomic"); err != nil {
		return 0, err
	}
	if err := p.readAfterWrite("Atomic"); err != nil {
		return 0, err
	}
	return p.atomic(op, width, off, operand, cond, "Atomic")
}

func (p *path) atomic(op transport.AtomicOp, width int, off uint64, operand, cond uint64, name string) (uint64, error) {
	if p.n.atom.fetch[op][wi(width)] {
		return p.fetch(fiOp(op), width, op == transport.AtomicCompareSwap, off, operand, cond, name)
	}
	return p.casLoop(op, width, off, operand, name)
}

// casLoop is the fallback for an op the provider lacks: read the word, then
// compare-and-swap the op's result until no other writer intervened.
func (p *path) casLoop(op transport.AtomicOp, width int, off uint64, operand uint64, name string) (uint64, error) {
	w := wi(width)
	if !p.n.atom.cswap[w] {
		return 0, errs.New(name, p.n.rank(), p.peer, errs.ErrInvalidArgument,
			"provider %s implements neither atomic op %d nor compare-and-swap on %d-byte words", p.n.prov, op, width)
	}
	var old uint64
	var err error
	if p.n.atom.read[w] {
		old, err = p.fetch(C.FI_ATOMIC_READ, width, false, off, 0, 0, name)
	} else { // compare with 0, store 0: reads the word and never changes it
		old, err = p.fetch(C.FI_CSWAP, width, true, off, 0, 0, name)
	}
	deadline := time.Now().Add(p.n.cfg.OpTimeout)
	for err == nil {
		if op == transport.AtomicFetch {
			return old, nil
		}
		var got uint64
		got, err = p.fetch(C.FI_CSWAP, width, true, off, emulate(op, width, old, operand), old, name)
		if err == nil && got == old {
			return old, nil
		}
		if time.Now().After(deadline) {
			return 0, errs.New(name, p.n.rank(), p.peer, errs.ErrTimeout, "compare-and-swap loop for op %d lost every race for %v", op, p.n.cfg.OpTimeout)
		}
		old = got
	}
	return 0, err
}

// fetch runs one fetching or compare atomic through a slot's bounce buffer
// (operand at 0, compare value at 8, result at 16) and waits for it.
func (p *path) fetch(fop C.int, width int, cmp bool, off, operand, cond uint64, name string) (uint64, error) {
	i, err := p.n.acquire(name, p)
	if err != nil {
		return 0, err
	}
	s := p.setup(i, kindBlock, 1, name)
	s.width = uint8(width)
	// post copies these into the bounce buffer once inside the node (Close
	// frees that C memory).
	var args [16]byte
	if width == 4 {
		binary.NativeEndian.PutUint32(args[0:], uint32(operand))
		binary.NativeEndian.PutUint32(args[8:], uint32(cond))
	} else {
		binary.NativeEndian.PutUint64(args[0:], operand)
		binary.NativeEndian.PutUint64(args[8:], cond)
	}
	r := req{code: reqFetch, src: args[:], off: off, fop: fop, dt: fiType(width)}
	if cmp {
		r.cmp = 1
	}
	if err := p.post(i, name, &r); err != nil {
		return 0, err
	}
	return p.n.await(i, p, true)
}

// AtomicPost applies a non-fetching op without waiting (fi_atomic with
// FI_INJECT); Quiet completes it. Ops the provider cannot post run as
// fetching atomics.
func (p *path) AtomicPost(op transport.AtomicOp, width int, off uint64, operand uint64) error {
	if err := p.checkAtomic(op, width, off, "AtomicPost"); err != nil {
		return err
	}
	if err := p.ordered("AtomicPost"); err != nil {
		return err
	}
	if !p.n.atom.post[op][wi(width)] || op == transport.AtomicSwap {
		if err := p.readAfterWrite("AtomicPost"); err != nil {
			return err
		}
		_, err := p.atomic(op, width, off, operand, 0, "AtomicPost")
		return err
	}
	return p.injectAtomic(fiOp(op), fiType(width), off, operand, "AtomicPost")
}

func (p *path) injectAtomic(fop, dt C.int, off, operand uint64, op string) error {
	if err := p.e.enter(op, p.peer); err != nil {
		return err
	}
	p.noteWrite()
	raddr, key := p.remote(off)
	err := p.retry(op, "fi_atomicmsg(inject)", func() C.ssize_t {
		return C.gf_atomic_inject(p.e.ep, fop, dt, C.uint64_t(operand), p.fa, raddr, key, writeFlags)
	})
	if err != nil {
		p.e.issued[0].Add(^uint64(0))
	}
	return err
}

func (p *path) checkAtomic(op transport.AtomicOp, width int, off uint64, name string) error {
	if !op.Valid() || (width != 4 && width != 8) || off%uint64(width) != 0 {
		return errs.New(name, p.n.rank(), p.peer, errs.ErrInvalidArgument, "atomic op %d width %d at offset %d", op, width, off)
	}
	return p.check(name, off, width)
}

// PutSignal delivers src, waits until every write of this node is in its
// target's memory (delivery-complete counters), then updates the signal
// word with an 8-byte atomic: a peer that sees the signal sees the data.
// Waiting costs a round trip; it relies on no provider ordering guarantee
// (FI_ORDER_WAW or FI_FENCE semantics differ between providers).
func (p *path) PutSignal(off uint64, src []byte, sigOff uint64, value uint64, op transport.SignalOp) error {
	if !op.Valid() {
		return errs.New("PutSignal", p.n.rank(), p.peer, errs.ErrInvalidArgument, "signal op %d", op)
	}
	if err := p.checkAtomic(transport.AtomicSet, 8, sigOff, "PutSignal"); err != nil {
		return err
	}
	if len(src) > 0 {
		if err := p.write(off, src, "PutSignal"); err != nil {
			return err
		}
		if err := p.e.quietWrites("PutSignal"); err != nil {
			return err
		}
	} else if err := p.ordered("PutSignal"); err != nil {
		return err
	}
	aop := transport.AtomicSet
	if op == transport.SignalAdd {
		aop = transport.AtomicFetchAdd
	}
	if p.n.atom.post[aop][1] {
		return p.injectAtomic(fiOp(aop), C.FI_UINT64, sigOff, value, "PutSignal")
	}
	_, err := p.atomic(aop, 8, sigOff, value, 0, "PutSignal")
	return err
}
