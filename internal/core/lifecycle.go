package core

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/goshmem/shmem/actors"
	"github.com/goshmem/shmem/internal/errs"
)

// exitError is how operations fail after some PE called GlobalExit.
type exitError struct{ rank, status int }

func (e *exitError) Error() string {
	return fmt.Sprintf("world ended by GlobalExit(%d) on PE %d", e.status, e.rank)
}

// Is makes an exit match ErrFinalized: the world is over either way.
func (e *exitError) Is(target error) bool { return target == errs.ErrFinalized }

// ExitStatus reports the status passed to GlobalExit if err comes from a
// world that GlobalExit ended.
func ExitStatus(err error) (int, bool) {
	var e *exitError
	if errors.As(err, &e) {
		return e.status, true
	}
	return 0, false
}

// Exited returns the error that says GlobalExit ended the world (see
// ExitStatus), or nil.
func (p *PE) Exited() error {
	if e := p.s.exited.Load(); e != nil {
		return &exitError{rank: e.rank, status: e.status}
	}
	return nil
}

// FenceCounted is Fence as the program calls it (shmem.PE.Fence): counted
// in the metrics (meter_pe.go), and never timed, since it waits for
// nothing. The collectives' own fences (Fence) are not counted.
func (p *PE) FenceCounted() {
	p.countLocal(OpFence)
	p.Fence()
}

// Fence orders this PE's puts, atomics and signals to each PE: those issued
// before it are delivered before those issued after it.
func (p *PE) Fence() {
	for _, e := range p.engines {
		if err := e.Fence(); err != nil {
			p.s.log.Warn("fence failed", "err", err)
		}
	}
}

// Quiet returns when every put, atomic, signal and GetNBI this PE issued is
// complete.
func (p *PE) Quiet() error {
	if atomic.LoadUint32(&p.s.quietFree) != 0 && !p.isCtx {
		// Nothing to complete and nothing has happened (QuietWord, which
		// the root package tests first, without the metrics): counted,
		// with metrics, without the engines' loop.
		if timed := p.countLocal(OpQuiet); timed != nil {
			observeNow(timed)
		}
		return nil
	}
	return p.quiet()
}

// observeNow times a Quiet that had nothing to do: apart, so that Quiet's
// common case has no clock call in its frame.
//
//go:noinline
func observeNow(x *Cell) { x.Observe(time.Now()) }

// quiet is Quiet past its common case: it counts, checks and completes
// each engine's work.
func (p *PE) quiet() error {
	// Metrics (meter_pe.go): nil without them, and unless this Quiet is
	// one to time; a Quiet that fails is counted, not timed.
	timed := p.countLocal(OpQuiet)
	var t0 time.Time
	if timed != nil {
		t0 = time.Now()
	}
	if err := p.usable(); err != nil {
		return p.annotate(err, "Quiet", errs.NoPE)
	}
	for _, e := range p.engines {
		if err := e.Quiet(); err != nil {
			return p.s.settle(err)
		}
	}
	if timed != nil {
		timed.Observe(t0)
	}
	return nil
}

// BarrierAll completes this PE's outstanding operations and waits until
// every PE has called BarrierAll.
func (p *PE) BarrierAll() error {
	if err := p.Check("BarrierAll"); err != nil {
		return err
	}
	// No defer, as in coll's synchronize: nothing in the barrier panics
	// but a bug and the simulated network's end of a PE, after which the
	// PE runs nothing more.
	p.s.collMu.Lock()
	err := p.s.world.BarrierAs("BarrierAll")
	p.s.collMu.Unlock()
	return err
}

// SyncAll waits until every PE has called SyncAll; unlike BarrierAll it
// does not complete outstanding operations.
func (p *PE) SyncAll() error { return p.SyncAllAs("SyncAll") }

// SyncAllAs is SyncAll as a step of the collective call op (the
// synchronization that ends Calloc): its errors, timeouts, hang reports
// and the simulator's record of the call name op, the call the user made.
func (p *PE) SyncAllAs(op string) error {
	if err := p.Check(op); err != nil {
		return err
	}
	p.s.collMu.Lock() // no defer: see BarrierAll
	err := p.s.world.SyncAs(op)
	p.s.collMu.Unlock()
	return err
}

// CollectiveLock serializes a collective call against the PE's others;
// the returned function unlocks. Teams use it.
func (p *PE) CollectiveLock() func() {
	p.s.collMu.Lock()
	return p.s.collMu.Unlock
}

// GlobalExit ends the world on every PE with status: their blocking calls
// return an error matching ErrFinalized that carries status (see
// ExitStatus), and a launcher's processes exit with it. The caller's own
// state changes before GlobalExit returns, so nothing it calls afterwards
// (Finalize included) can complete a peer's operation; where the backend
// exits the process (Config.OnGlobalExit), GlobalExit never returns. After
// Finalize it does nothing.
func (p *PE) GlobalExit(status int) {
	if p.s.finalized.Load() {
		return
	}
	msg := &actors.GlobalExit{Rank: p.MyPE(), Status: status}
	for r := 0; r < p.s.cfg.NPEs; r++ {
		if r != p.MyPE() {
			p.s.send(r, msg)
		}
	}
	// Recorded here, on the caller's goroutine, not through the mailbox:
	// a Finalize right after must see it. With an exit handler this runs
	// the handler, which ends the process.
	p.s.deliver(msg)
	if p.s.cfg.OnGlobalExit != nil {
		select {} // the handler is ending the process
	}
}

// finalizeDomain is the agreement round of Finalize.
const finalizeDomain = "finalize"

// finalizeResult is what a PE's Finalize returned.
type finalizeResult struct{ err error }

// Finalize completes outstanding operations, waits for every PE
// (collective), then releases the heap, the paths and the actors. After
// it every operation fails with ErrFinalized, but Finalize itself: a
// later call returns what the first returned (nil, or the same error: a
// Finalize that timed out stays an error however often it is asked), and
// one made while the first is still under way on another goroutine fails
// with ErrFinalized.
//
// Finalize is matched only by Finalize: a PE that calls it while others
// wait in a collective makes them fail (ErrPEFailed, "PE 1 called Finalize
// while this PE waits in BarrierAll"), and their own Finalize then still
// completes, whatever happened to the team's numbering before. It reports
// what happened to the world: a PE that failed earlier (ErrPEFailed, one
// line per PE), the GlobalExit that ended it (see ExitStatus). The
// release happens in every case.
func (p *PE) Finalize() error {
	if p.isCtx {
		return errs.New("Finalize", p.MyPE(), errs.NoPE, errs.ErrInvalidArgument, "called on a context: use Destroy")
	}
	const op = "Finalize"
	if p.s.finalized.Load() {
		return p.finalizedAgain(op)
	}
	var err error
	// With a PE already failed there is nobody to wait for, and the
	// agreement below could wait on a coordinator this PE no longer
	// reaches (a partition): release at once.
	together := p.usable() == nil && p.s.nFailed.Load() == 0
	if together {
		// Every context's operations complete first (the contexts not
		// destroyed, then the PE's own), each error kept.
		qerr := p.quietContexts()
		err = p.Quiet()
		if err == nil {
			err = qerr
		}
	}
	p.s.collMu.Lock()
	defer p.s.collMu.Unlock()
	if p.s.finalized.Load() {
		// Another goroutine's Finalize ran meanwhile (it held collMu):
		// the heap this one would mark is released.
		return p.finalizedAgain(op)
	}
	// Publish the departure first: a peer blocked in an operation this PE
	// will never run learns it from here (coll.CheckPeers). Not after a
	// GlobalExit: the exit's notice is on its way to every peer, and the
	// departure, read from memory, could beat it there and end a peer's
	// wait as a failure ("PE 1 holds the lock and called Finalize")
	// where the exit ended the world.
	if p.s.exited.Load() == nil {
		p.s.world.NumberFinalize()
	}
	if leaving := p.s.cfg.Leaving; leaving != nil {
		leaving()
	}
	if together && err == nil && p.s.cfg.NPEs > 1 {
		// The agreement, not a barrier: it is matched only by the other
		// PEs' Finalize, and it proves every PE has stopped using its
		// peers before anyone tears down (a PE tearing down its
		// connections early would look failed to the others).
		_, err = p.Agree(op, finalizeDomain, 1, p.s.world.Members(), p.MyPE(), nil)
	}
	switch {
	case together && err == nil:
		// Every PE reached its Finalize: what fails from now on is a peer
		// tearing down, not a failure to report (nor to log as one).
		p.s.agreed.Store(true)
		if fin := p.s.cfg.Finalized; fin != nil {
			fin()
		}
	case !together || errors.Is(err, errs.ErrPEFailed):
		// Every failure this PE knows of, each named once. The
		// coordinator's answer can come before the failure's notice: then
		// this PE knows of none yet, and the agreement's error stands.
		if all := p.failures(op); all != nil {
			err = all
		}
	}
	if e := p.s.exited.Load(); e != nil {
		// Named as the call and the PEs every other error is; ExitStatus
		// and ErrFinalized still find the exit through the wrapping.
		err = errs.New(op, p.MyPE(), e.rank, &exitError{rank: e.rank, status: e.status}, "")
	}
	if !p.s.finalized.CompareAndSwap(false, true) {
		// Another goroutine's Finalize got here first.
		return p.finalizedAgain(op)
	}
	// Recorded whatever happens below, so that no later call can report
	// success where this one did not (a deferred release that panics).
	defer func() { p.s.finResult.Store(&finalizeResult{err}) }()
	p.s.raise()
	p.s.changed()
	// A wait another goroutine of this PE is blocked in reads the heap
	// until it sees the Finalize (changed woke it): the heap is released
	// (Release unmaps it) only once every such wait has left.
	for pause := 20 * time.Microsecond; p.s.inWait.Load() != 0; pause = min(2*pause, 10*time.Millisecond) {
		time.Sleep(pause)
	}
	root := p.s.cfg.System.Root
	if p.s.pePID != nil {
		_ = root.StopFuture(p.s.pePID).Wait()
		p.s.pePID = nil
	}
	if rel := p.s.cfg.Release; rel != nil {
		err = errs.Join(err, rel())
	}
	return err
}

// finalizedAgain is the result of a Finalize after the PE's first: the
// first's result once it returned, else ErrFinalized (it is still
// releasing, on another goroutine).
func (p *PE) finalizedAgain(op string) error {
	if r := p.s.finResult.Load(); r != nil {
		return r.err
	}
	return errs.New(op, p.MyPE(), errs.NoPE, errs.ErrFinalized, "another call of Finalize on this PE has not returned yet")
}

// failures returns an error naming every PE that failed, with the one line
// of reason each was reported with, or nil.
func (p *PE) failures(op string) error {
	if p.s.nFailed.Load() == 0 {
		return nil
	}
	var ranks []int
	var b strings.Builder
	for _, r := range p.s.failed.Ranks() {
		if why := p.s.failed.Load(r); why != nil {
			ranks = append(ranks, r)
			if b.Len() > 0 {
				b.WriteString("; ")
			}
			fmt.Fprintf(&b, "PE %d: %s", r, firstLine(*why))
		}
	}
	return errs.New(op, p.MyPE(), ranks[0], errs.ErrPEFailed, "PEs failed during the run (%s)", b.String())
}

// firstLine keeps the first line of a failure's reason: a panic's stack
// belongs in the failed PE's own error, not in every survivor's.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
