package shmem

import (
	"context"
	"sync/atomic"

	"github.com/goshmem/shmem/internal/core"
	"github.com/goshmem/shmem/internal/errs"
)

// PE is one processing element of a world, or a context on one
// (CreateCtx). It comes from Init or, in the simulator, from sim.Run; a
// nil or zero PE is not usable (its calls fail with ErrInvalidArgument). Its methods are safe for concurrent use by the
// goroutines of the PE, except that collective calls (BarrierAll, SyncAll,
// Finalize, the allocation calls, team splits and collectives) must come in
// the same order on every PE.
type PE struct {
	c *core.PE
	// world and shared are the PE's TeamWorld and TeamShared; a context
	// shares them with its PE, so TeamWorld is one value per PE.
	world, shared *Team
	// pe is the PE itself: p for the PE, the PE a context was made on for
	// a context; team is a context's team (TeamWorld unless Team.CreateCtx
	// made it).
	pe   *PE
	team *Team
	// hang stops the SIGQUIT hang report (WithHangReport); nil without.
	hang func()
	// quietFree is c.QuietWord(), read by Quiet without a call; nil in
	// a zero PE.
	quietFree *uint32
	// anyTurn places the scans of WaitUntilAny and TestAny (anyStart).
	anyTurn atomic.Uint64
	// ctx ends this handle's waits (WithContext); nil for none.
	ctx context.Context
}

// WithContext returns a handle on p whose waits on this PE's memory also
// end when ctx is done: WaitUntil, WaitUntilAll, WaitUntilAny,
// WaitUntilSome, their Vector forms and SignalWaitUntil then return an
// error that names the call and wraps ctx.Err(), so errors.Is(err,
// context.Canceled) or errors.Is(err, context.DeadlineExceeded) holds. A
// wait whose condition already holds returns nil whatever ctx says. The
// handle's other calls are p's: team operations (barriers, collectives,
// allocation) and locks are not cut short, since a member that left one
// midway would break it for every member (WithOpTimeout bounds them, and
// failure detection ends them). The handle is p for everything else (the
// same PE or context, the same Quiet); p's own calls keep no context.
func (p *PE) WithContext(ctx context.Context) *PE {
	if p.zero() || ctx == nil {
		return p
	}
	return &PE{c: p.c, world: p.world, shared: p.shared, pe: p.pe, team: p.team, quietFree: p.quietFree, ctx: ctx}
}

// waitContext is the context that ends the handle's waits.
func (p *PE) waitContext() context.Context {
	if p.ctx == nil {
		return context.Background()
	}
	return p.ctx
}

// newPE wraps the runtime's PE c in the public handle.
func newPE(c *core.PE) *PE {
	p := &PE{c: c, quietFree: c.QuietWord()}
	p.world = &Team{t: c.TeamWorld(), p: p}
	p.shared = &Team{t: c.TeamShared(), p: p}
	p.pe, p.team = p, p.world
	return p
}

// MyPE returns this PE's number in the world, 0..NPEs()-1 (shmem_my_pe).
func (p *PE) MyPE() int {
	if p.zero() {
		return errs.NoPE
	}
	return p.c.MyPE()
}

// NPEs returns the number of PEs in the world (shmem_n_pes), or -1 for a
// nil or zero PE, as MyPE and a nil Team's NPEs do.
func (p *PE) NPEs() int {
	if p.zero() {
		return errs.NoPE
	}
	return p.c.NPEs()
}

// Accessible reports whether pe is a live PE of this world that this PE can
// reach (shmem_pe_accessible). It is false for a number out of range, a PE
// known to have failed, and after Finalize or GlobalExit.
func (p *PE) Accessible(pe int) bool { return !p.zero() && p.c.Accessible(pe) }

// OnFailure makes f run once for each PE this PE learns has failed (its
// process died or was killed, or failure detection lost it), with the
// reason this PE recorded: for failures already recorded at once, for
// later ones as they are recorded. A PE that goes away after every PE
// has reached Finalize has left, not failed, and is not reported, nor is
// a GlobalExit. The calls come one at a time, in the order the failures
// were recorded, on a goroutine of goshmem's, so f may block and may call
// goshmem; one may still be running when Finalize returns. Calling
// OnFailure again replaces f for the calls not yet made (each PE is still
// reported once); nil drops them. A context's handler is its PE's. No
// OpenSHMEM routine does this: services use it where they would poll
// Accessible.
func (p *PE) OnFailure(f func(pe int, reason string)) {
	if !p.zero() {
		p.c.SetFailureHandler(f)
	}
}

// Fence orders this PE's puts, atomics and signals to each PE: those issued
// before it are delivered before those issued after it (shmem_fence). It
// does not order operations to different PEs; Quiet does.
func (p *PE) Fence() {
	if !p.zero() {
		p.c.FenceCounted()
	}
}

// Quiet returns when every put, atomic, signal and GetNBI this PE (or this
// context) issued is complete (shmem_quiet): after it, the data is visible
// to every PE and GetNBI buffers are filled.
func (p *PE) Quiet() error {
	if p == nil || p.quietFree == nil || atomic.LoadUint32(p.quietFree) == 0 {
		return p.quiet()
	}
	return nil // one load on an all-mapped PE without metrics; inlines
}

// quiet is Quiet past its common case.
func (p *PE) quiet() error {
	if p.zero() {
		return zeroPE("Quiet")
	}
	return p.c.Quiet()
}

// BarrierAll completes this PE's outstanding operations (Quiet) and waits
// until every PE has called BarrierAll (shmem_barrier_all). It fails with
// ErrPEFailed when a PE dies before reaching it.
func (p *PE) BarrierAll() error {
	if p.zero() {
		return zeroPE("BarrierAll")
	}
	if p.c.CollMetered() {
		return meteredColl(p.c, core.CollBarrier, p.c.BarrierAll)
	}
	return p.c.BarrierAll() // direct: the method value is an indirect call through a wrapper
}

// SyncAll waits until every PE has called SyncAll (shmem_sync_all). Unlike
// BarrierAll it completes nothing: pair it with Quiet when the data matters.
func (p *PE) SyncAll() error {
	if p.zero() {
		return zeroPE("SyncAll")
	}
	if p.c.CollMetered() {
		return meteredColl(p.c, core.CollSync, p.c.SyncAll)
	}
	return p.c.SyncAll()
}

// syncAllAs is SyncAll ending the collective call op (Calloc, Realloc),
// so that what fails in it names the call the user made.
func (p *PE) syncAllAs(op string) error {
	if p.c.CollMetered() {
		return meteredColl(p.c, core.CollSync, func() error { return p.c.SyncAllAs(op) })
	}
	return p.c.SyncAllAs(op)
}

// GlobalExit ends the world on every PE with status (shmem_global_exit):
// their blocking calls return an error matching ErrFinalized that carries
// status (see ExitStatus), and with WithExitOnGlobalExit (the launcher's
// default) every process exits with it. After Finalize it does nothing.
func (p *PE) GlobalExit(status int) {
	if !p.zero() {
		p.c.GlobalExit(status)
	}
}

// Finalize ends this PE (shmem_finalize): it completes outstanding
// operations, waits for every PE's Finalize (collective), then releases
// the heap, mappings, sockets and goroutines. After it every call fails
// with ErrFinalized, except Finalize itself: OpenSHMEM makes Finalize the
// last call, and a second one here returns what the first returned (nil
// again, or the same error: a Finalize that timed out is not turned into
// a success by calling it twice).
//
// Only Finalize matches Finalize: PEs that wait in another collective when
// this PE calls it fail with ErrPEFailed naming it, and their Finalize
// still completes. Finalize reports what happened to the world during the
// run: PEs that failed (ErrPEFailed, one line of reason each), or the
// GlobalExit that ended it (ExitStatus reads its status). Everything is
// released in every case. The error-exit pattern is therefore:
//
//	err := body(p)               // return at the first error
//	return errors.Join(err, p.Finalize())
func (p *PE) Finalize() error {
	if p.zero() {
		return zeroPE("Finalize")
	}
	err := p.c.Finalize()
	if pe := p.pe; pe.hang != nil { // a context's or WithContext's handle stops its PE's
		pe.hang()
		pe.hang = nil
	}
	return err
}

// TeamWorld returns the team of all PEs (SHMEM_TEAM_WORLD).
func (p *PE) TeamWorld() *Team {
	if p.zero() {
		return nil
	}
	return p.world
}

// TeamShared returns the team of the PEs whose memory Ptr reaches from this
// PE, itself included (SHMEM_TEAM_SHARED).
func (p *PE) TeamShared() *Team {
	if p.zero() {
		return nil
	}
	return p.shared
}
