package core

import (
	"errors"
	"fmt"
	"time"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
)

// exitGrace is how long an operation whose peer's connection ended waits
// for a GlobalExit notice before it reports the peer failed (see settle;
// state.exitGrace holds it, so that a test can lengthen it). Short next
// to the seconds failure detection takes.
const exitGrace = 300 * time.Millisecond

// settle decides what a data-path error means for this PE. A peer that
// ends the world with GlobalExit, or ends its process on one, drops its
// data connections, and the notice travels on another connection (the
// backend's control lane), so an operation can see the drop first: an
// error naming a failed peer then waits up to exitGrace for the notice
// and reports the exit, which is what happened, instead of a failure.
// The wait ends early when another PE than the one the error names is
// recorded failed: the drop is then that failure's consequence (a
// survivor that saw it first finalized and left), which blame names, and
// waiting on would let the survivor's own departure be recorded as a
// failure in its own right and take the blame (a 4-host run with one PE
// killed: a survivor's error named another survivor, 300 ms late). It
// also ends when a control link to the named peer, this PE's or another
// PE's, ended without a goodbye (actors.PEFailed.Link): every PE that
// leaves on a GlobalExit says goodbye on its links but the caller, which
// ends only after every other PE has gone (or after lingering 5 s), and
// whose notice travels on its links ahead of their end. So the peer did
// not leave on an exit, and a killed peer is reported at once, not after
// exitGrace, by every survivor alike (when only some did, the others'
// departures were still recorded as failures in the wait, and blamed).
// With Config.OnGlobalExit set it does not return once the exit is known
// (see usable).
func (s *state) settle(err error) error {
	if err == nil || !errors.Is(err, errs.ErrPEFailed) {
		return err
	}
	if s.exited.Load() == nil {
		t := time.NewTimer(s.exitGrace)
		defer t.Stop()
	wait:
		for {
			woken := s.wake.wait() // before the look: a change after it closes it
			if s.failureKnown(err) {
				break
			}
			select {
			case <-s.exitKnown:
				break wait
			case <-woken: // a failure recorded, or another change: look again
			case <-t.C:
				return s.blame(err)
			}
		}
	}
	p := &PE{s: s}
	if uerr := p.usable(); uerr != nil {
		return p.annotate(uerr, "settle", errs.NoPE)
	}
	return s.blame(err)
}

// failureKnown reports whether the drop err names is known for a failure
// rather than a GlobalExit (see settle): the PE recorded failed first is
// another than the one err names, or a control link to the named peer
// ended without a goodbye.
func (s *state) failureKnown(err error) bool {
	var e *errs.Error
	if !errors.As(err, &e) || e.Target == errs.NoPE {
		return false
	}
	first := int(s.firstFailed.Load()) - 1
	return (first >= 0 && e.Target != first) || s.failed.LinkLost(e.Target)
}

// blame renames a data-path error naming a peer to the PE this PE
// recorded failed first, when that is another: a survivor that saw the
// failure first and finalized drops its connections too, and an
// operation under way on one then fails on it (settle's wait gives the
// failure's notice the time to arrive first). A peer recorded failed in
// its own right (a PE cut off from every other sees them all fail) keeps
// the blame: the operation was its.
func (s *state) blame(err error) error {
	first := int(s.firstFailed.Load()) - 1
	var e *errs.Error
	if first < 0 || !errors.As(err, &e) || e.Target == first || e.Target == errs.NoPE || s.failed.Load(e.Target) != nil {
		return err
	}
	why := s.failed.Load(first)
	if why == nil {
		return err
	}
	c := *e
	c.Target = first
	c.Detail = fmt.Sprintf("PE %d failed (%s); then the connection to PE %d ended: %s", first, firstLine(*why), e.Target, e.Detail)
	return &c
}

// settledPath is a path to a peer across the network: its errors go
// through settle. Start gives every path that is not a mapping one; the
// engine stays the path's own (Quiet settles its errors itself).
type settledPath struct {
	transport.Path
	s *state
}

func (p settledPath) Put(off uint64, src []byte) error { return p.s.settle(p.Path.Put(off, src)) }
func (p settledPath) Get(dst []byte, off uint64) error { return p.s.settle(p.Path.Get(dst, off)) }
func (p settledPath) GetNBI(dst []byte, off uint64) error {
	return p.s.settle(p.Path.GetNBI(dst, off))
}

func (p settledPath) Atomic(op transport.AtomicOp, width int, off uint64, operand, cond uint64) (uint64, error) {
	v, err := p.Path.Atomic(op, width, off, operand, cond)
	return v, p.s.settle(err)
}

func (p settledPath) AtomicPost(op transport.AtomicOp, width int, off uint64, operand uint64) error {
	return p.s.settle(p.Path.AtomicPost(op, width, off, operand))
}

func (p settledPath) PutSignal(off uint64, src []byte, sigOff uint64, value uint64, op transport.SignalOp) error {
	return p.s.settle(p.Path.PutSignal(off, src, sigOff, value, op))
}
