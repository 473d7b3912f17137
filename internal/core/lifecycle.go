package core

import (
	"errors"
	"fmt"

	"github.com/goshmem/shmem/actors"
	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/team"
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
	if err := p.usable(); err != nil {
		return p.annotate(err, "Quiet", errs.NoPE)
	}
	for _, e := range p.engines {
		if err := e.Quiet(); err != nil {
			return p.s.settle(err)
		}
	}
	return nil
}

// BarrierAll completes this PE's outstanding operations and waits until
// every PE has called BarrierAll.
func (p *PE) BarrierAll() error {
	if err := p.Check("BarrierAll"); err != nil {
		return err
	}
	p.s.collMu.Lock()
	defer p.s.collMu.Unlock()
	return p.s.world.Barrier()
}

// SyncAll waits until every PE has called SyncAll; unlike BarrierAll it
// does not complete outstanding operations.
func (p *PE) SyncAll() error {
	if err := p.Check("SyncAll"); err != nil {
		return err
	}
	p.s.collMu.Lock()
	defer p.s.collMu.Unlock()
	return p.s.world.Sync()
}

// CollectiveLock serializes a collective call against the PE's others;
// the returned function unlocks. Teams use it.
func (p *PE) CollectiveLock() func() {
	p.s.collMu.Lock()
	return p.s.collMu.Unlock
}

// GlobalExit ends the world on every PE with status: their blocking calls
// return an error matching ErrFinalized that carries status (see
// ExitStatus), and a launcher's processes exit with it. After Finalize it
// does nothing.
func (p *PE) GlobalExit(status int) {
	if p.s.finalized.Load() {
		return
	}
	for r := 0; r < p.s.cfg.NPEs; r++ {
		p.s.send(r, &actors.GlobalExit{Rank: p.MyPE(), Status: status})
	}
}

// Finalize completes outstanding operations, waits for every PE
// (collective), then releases the heap, the paths and the actors. It is
// idempotent; after it every operation fails with ErrFinalized. When a PE
// has failed, the barrier reports it but the release still happens.
func (p *PE) Finalize() error {
	if p.isCtx {
		return errs.New("Finalize", p.MyPE(), errs.NoPE, errs.ErrInvalidArgument, "called on a context: use Destroy")
	}
	if p.s.finalized.Load() {
		return nil
	}
	var err error
	// With a PE already failed there is no barrier to hold, and the
	// agreement below could wait on a coordinator this PE no longer
	// reaches (a partition): release at once.
	together := p.usable() == nil && p.s.nFailed.Load() == 0
	if together {
		// The barrier runs even when a context's Quiet failed: the other
		// PEs are waiting in it.
		qerr := p.quietContexts()
		err = p.BarrierAll()
		if err == nil {
			err = qerr
		}
	}
	p.s.collMu.Lock()
	defer p.s.collMu.Unlock()
	if together && err == nil && p.s.cfg.NPEs > 1 {
		// A PE that leaves the barrier may still have peers waiting in
		// its last round; a PE tearing down its connections now would
		// look failed to them. One more agreement proves everyone has
		// left the barrier before anyone tears down.
		_ = p.s.world.Number("Finalize", team.KindFinalize)
		_, err = p.Agree("Finalize", "finalize", 1, p.s.world.Members(), p.MyPE(), nil)
	}
	if errors.Is(err, errs.ErrPEFailed) {
		// A PE died during the closing barrier: the survivors have nothing
		// left to agree on, and releasing is all Finalize still owes.
		p.s.log.Info("Finalize without the failed PE", "err", err)
		err = nil
	}
	if !p.s.finalized.CompareAndSwap(false, true) {
		return err
	}
	p.s.bell.Ring()
	root := p.s.cfg.System.Root
	if p.s.pePID != nil {
		_ = root.StopFuture(p.s.pePID).Wait()
		p.s.pePID = nil
	}
	if rel := p.s.cfg.Release; rel != nil {
		err = errors.Join(err, rel())
	}
	return err
}
