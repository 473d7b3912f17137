package world

import (
	"errors"
	"time"

	"github.com/goshmem/shmem/internal/core"
	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
)

// exitGrace is how long a network operation that lost its peer waits for
// a GlobalExit notice before it reports the peer failed (see settle).
const exitGrace = 300 * time.Millisecond

// exitAware wraps a network path. A PE that calls GlobalExit drops its
// connections at once, and its exit notice travels on another connection
// (the control plane), so an operation can see the drop first; settle
// then reports the exit, which is what happened, instead of a failure.
type exitAware struct {
	transport.Path
	p **core.PE // set once the PE exists; paths are built before it
}

func (e exitAware) Put(off uint64, src []byte) error { return e.settle(e.Path.Put(off, src)) }
func (e exitAware) Get(dst []byte, off uint64) error { return e.settle(e.Path.Get(dst, off)) }
func (e exitAware) GetNBI(dst []byte, off uint64) error {
	return e.settle(e.Path.GetNBI(dst, off))
}

func (e exitAware) Atomic(op transport.AtomicOp, width int, off uint64, operand, cond uint64) (uint64, error) {
	v, err := e.Path.Atomic(op, width, off, operand, cond)
	return v, e.settle(err)
}

func (e exitAware) AtomicPost(op transport.AtomicOp, width int, off uint64, operand uint64) error {
	return e.settle(e.Path.AtomicPost(op, width, off, operand))
}

func (e exitAware) PutSignal(off uint64, src []byte, sigOff uint64, value uint64, op transport.SignalOp) error {
	return e.settle(e.Path.PutSignal(off, src, sigOff, value, op))
}

// Engine returns the wrapped engine, itself wrapped; comparable, so the
// PE still sees one engine for all the paths that share it.
func (e exitAware) Engine() transport.Engine { return exitAwareEngine{e.Path.Engine(), e.p} }

type exitAwareEngine struct {
	transport.Engine
	p **core.PE
}

func (x exitAwareEngine) Fence() error { return settle(x.p, x.Engine.Fence()) }
func (x exitAwareEngine) Quiet() error { return settle(x.p, x.Engine.Quiet()) }

func (e exitAware) settle(err error) error { return settle(e.p, err) }

func settle(p **core.PE, err error) error {
	if err == nil || !errors.Is(err, errs.ErrPEFailed) || *p == nil {
		return err
	}
	for deadline := time.Now().Add(exitGrace); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cerr := (*p).Check("settle"); errors.Is(cerr, errs.ErrFinalized) {
			if _, exited := core.ExitStatus(cerr); exited {
				return cerr
			}
		}
	}
	return err
}
