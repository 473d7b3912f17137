package core

import (
	"time"

	"github.com/goshmem/shmem/transport"
)

// meteredPath counts and samples the operations of one handle (a PE or
// a context) on one path. Start and CreateTeamCtx put it in place of the
// path only when metrics are on, so without them the hot path is what it
// was: not even a branch.
type meteredPath struct {
	transport.Path
	m     *meter
	cells *[NumMeterOps]cell // the handle's meterBlock, row of the path's kind
}

// meterPaths returns paths wrapped for the handle whose meterBlock is b; kinds
// gives the kind of each (by index).
func (m *meter) meterPaths(paths []transport.Path, kinds func(i int) PathKind, b *meterBlock) []transport.Path {
	out := make([]transport.Path, len(paths))
	for i, p := range paths {
		out[i] = &meteredPath{Path: p, m: m, cells: &b.cells[kinds(i)]}
	}
	return out
}

func (p *meteredPath) Put(off uint64, src []byte) error {
	c := &p.cells[OpPut]
	if !p.m.begin(c, len(src)) {
		return p.Path.Put(off, src)
	}
	t0 := time.Now()
	err := p.Path.Put(off, src)
	c.observe(t0)
	return err
}

func (p *meteredPath) Get(dst []byte, off uint64) error {
	c := &p.cells[OpGet]
	if !p.m.begin(c, len(dst)) {
		return p.Path.Get(dst, off)
	}
	t0 := time.Now()
	err := p.Path.Get(dst, off)
	c.observe(t0)
	return err
}

// GetNBI is timed to its return, not to the Quiet that completes it.
func (p *meteredPath) GetNBI(dst []byte, off uint64) error {
	c := &p.cells[OpGetNBI]
	if !p.m.begin(c, len(dst)) {
		return p.Path.GetNBI(dst, off)
	}
	t0 := time.Now()
	err := p.Path.GetNBI(dst, off)
	c.observe(t0)
	return err
}

func (p *meteredPath) Atomic(op transport.AtomicOp, width int, off uint64, operand, cond uint64) (uint64, error) {
	c := &p.cells[OpAtomicFetch]
	if !p.m.begin(c, width) {
		return p.Path.Atomic(op, width, off, operand, cond)
	}
	t0 := time.Now()
	v, err := p.Path.Atomic(op, width, off, operand, cond)
	c.observe(t0)
	return v, err
}

func (p *meteredPath) AtomicPost(op transport.AtomicOp, width int, off uint64, operand uint64) error {
	c := &p.cells[OpAtomicPost]
	if !p.m.begin(c, width) {
		return p.Path.AtomicPost(op, width, off, operand)
	}
	t0 := time.Now()
	err := p.Path.AtomicPost(op, width, off, operand)
	c.observe(t0)
	return err
}

// PutSignal counts the data's bytes and the 8-byte signal word.
func (p *meteredPath) PutSignal(off uint64, src []byte, sigOff uint64, value uint64, op transport.SignalOp) error {
	c := &p.cells[OpPutSignal]
	if !p.m.begin(c, len(src)+8) {
		return p.Path.PutSignal(off, src, sigOff, value, op)
	}
	t0 := time.Now()
	err := p.Path.PutSignal(off, src, sigOff, value, op)
	c.observe(t0)
	return err
}

// AtomicNBI is counted as a fetching atomic and timed to its return. On
// a path without non-blocking atomics it performs the atomic at once and
// fills dst, as the caller would have.
func (p *meteredPath) AtomicNBI(op transport.AtomicOp, width int, off uint64, operand, cond uint64, dst []byte) error {
	c := &p.cells[OpAtomicFetch]
	timed := p.m.begin(c, width)
	var t0 time.Time
	if timed {
		t0 = time.Now()
	}
	var err error
	if nb, ok := p.Path.(transport.AtomicNBIPath); ok {
		err = nb.AtomicNBI(op, width, off, operand, cond, dst)
	} else {
		var old uint64
		if old, err = p.Path.Atomic(op, width, off, operand, cond); err == nil {
			transport.PutWord(dst, width, old)
		}
	}
	if timed {
		c.observe(t0)
	}
	return err
}
