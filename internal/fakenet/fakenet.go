// Package fakenet is an in-process network of data paths for testing the
// PE runtime and the team collectives on their own, in the spirit of
// memberlist's MockNetwork: every PE's heap is a byte slice of this
// process, every path a load/store into the peer's heap (udma's), and a
// test can fail a PE, which cuts every link to it so that operations on
// those links fail as they do on a lost connection.
package fakenet

import (
	"sync/atomic"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
	"github.com/goshmem/shmem/transport/udma"
)

// Network is a set of PEs' heaps and the paths between them.
type Network struct {
	heaps  [][]byte
	bells  []transport.Bell
	failed []atomic.Bool
}

// New returns a network of n PEs, each with a zeroed heap of heapSize
// bytes.
func New(n, heapSize int) *Network {
	nw := &Network{heaps: make([][]byte, n), bells: make([]transport.Bell, n), failed: make([]atomic.Bool, n)}
	for r := range nw.heaps {
		nw.heaps[r] = make([]byte, heapSize)
		nw.bells[r] = transport.NewLocalBell()
	}
	return nw
}

// N returns the number of PEs.
func (nw *Network) N() int { return len(nw.heaps) }

// Heap returns PE r's heap.
func (nw *Network) Heap(r int) []byte { return nw.heaps[r] }

// Bell returns PE r's bell, which writers into its heap ring.
func (nw *Network) Bell(r int) transport.Bell { return nw.bells[r] }

// Paths returns PE from's path to every PE, itself included, by rank.
func (nw *Network) Paths(from int) []transport.Path {
	fence := new(atomic.Uint64)
	out := make([]transport.Path, len(nw.heaps))
	for to := range out {
		out[to] = &path{Path: udma.NewPath(nw.heaps[to], nw.bells[to], fence, true), nw: nw, from: from, to: to}
	}
	return out
}

// Fail marks PE r failed: every operation on a link to or from it fails
// from now on, and every PE's waiters are woken to notice.
func (nw *Network) Fail(r int) {
	nw.failed[r].Store(true)
	for _, b := range nw.bells {
		b.Ring()
	}
}

// Failed reports whether PE r was failed.
func (nw *Network) Failed(r int) bool { return nw.failed[r].Load() }

// path is a udma path that fails once either end has failed.
type path struct {
	*udma.Path
	nw       *Network
	from, to int
}

func (p *path) down(op string) error {
	if p.nw.failed[p.to].Load() || p.nw.failed[p.from].Load() {
		return errs.New(op, p.from, p.to, errs.ErrPEFailed, "fakenet: link cut")
	}
	return nil
}

func (p *path) Put(off uint64, src []byte) error {
	if err := p.down("Put"); err != nil {
		return err
	}
	return p.Path.Put(off, src)
}

func (p *path) Get(dst []byte, off uint64) error {
	if err := p.down("Get"); err != nil {
		return err
	}
	return p.Path.Get(dst, off)
}

func (p *path) GetNBI(dst []byte, off uint64) error {
	if err := p.down("GetNBI"); err != nil {
		return err
	}
	return p.Path.GetNBI(dst, off)
}

func (p *path) Atomic(op transport.AtomicOp, width int, off uint64, operand, cond uint64) (uint64, error) {
	if err := p.down("Atomic"); err != nil {
		return 0, err
	}
	return p.Path.Atomic(op, width, off, operand, cond)
}

func (p *path) AtomicPost(op transport.AtomicOp, width int, off uint64, operand uint64) error {
	if err := p.down("AtomicPost"); err != nil {
		return err
	}
	return p.Path.AtomicPost(op, width, off, operand)
}

func (p *path) PutSignal(off uint64, src []byte, sigOff uint64, value uint64, op transport.SignalOp) error {
	if err := p.down("PutSignal"); err != nil {
		return err
	}
	return p.Path.PutSignal(off, src, sigOff, value, op)
}
