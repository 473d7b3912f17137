package shmem

import (
	"github.com/goshmem/shmem/internal/core"
	"github.com/goshmem/shmem/internal/errs"
)

// CtxOption is an option of CreateCtx (the SHMEM_CTX_* options). Each is
// the caller's promise about how it will use the context; goshmem accepts
// all of them and checks none.
type CtxOption int

// The context options.
const (
	// CtxPrivate: only the goroutine that created the context uses it.
	// Go has no thread identity to check it against; it changes nothing.
	CtxPrivate CtxOption = core.CtxPrivate
	// CtxSerialized: no two goroutines use the context at once. goshmem's
	// contexts are safe for concurrent use anyway; it changes nothing.
	CtxSerialized CtxOption = core.CtxSerialized
	// CtxNostore: the caller issues no puts, non-fetching atomics or
	// signals on the context, so its Quiet and Fence need not complete
	// stores. goshmem's Quiet on it still completes whatever it issued.
	CtxNostore CtxOption = core.CtxNostore
)

// CreateCtx returns a context on the world (shmem_ctx_create): a handle
// on the same PE and heap whose puts, gets, atomics and signals are
// ordered by its own Fence and completed by its own Quiet. A Quiet on one
// context does not wait for another's operations: over the network each
// context has connections of its own (opened on first use), so a context
// that streams to a slow peer holds up no other context's Quiet; on
// same-host paths and the simulator's Eager delivery every operation
// completes as it returns, and the simulator's Lazy delivery holds each
// context's writes in flight until its own Quiet, as a network does.
// The PE itself is the default context (SHMEM_CTX_DEFAULT): its Quiet,
// BarrierAll and ClearLock complete its own operations, not those of the
// contexts made from it. End a context with Destroy, which completes its
// operations; Finalize releases the ones left. Options are combined with
// |, or given one by one; an unknown option is ErrInvalidArgument.
func (p *PE) CreateCtx(opts ...CtxOption) (*PE, error) {
	if p.zero() {
		return nil, zeroPE("CreateCtx")
	}
	return p.pe.createCtx(nil, opts)
}

// CreateCtx returns a context on the team (shmem_team_create_ctx): like
// PE.CreateCtx, except that the target PE numbers of the context's
// operations (puts, gets, atomics, signals, Ptr, Accessible) are the
// team's, and the context's Team is t. MyPE and NPEs stay the world's: use
// t.MyPE. A nil or destroyed team is ErrInvalidArgument
// (SHMEM_TEAM_INVALID).
func (t *Team) CreateCtx(opts ...CtxOption) (*PE, error) {
	if t == nil {
		return nil, nilTeam("CreateCtx")
	}
	return t.p.pe.createCtx(t, opts)
}

func (p *PE) createCtx(t *Team, opts []CtxOption) (*PE, error) {
	bits := 0
	for _, o := range opts {
		if o < 0 || o > CtxPrivate|CtxSerialized|CtxNostore {
			return nil, errs.New("CreateCtx", p.MyPE(), errs.NoPE, errs.ErrInvalidArgument, "unknown context option %d", o)
		}
		bits |= int(o)
	}
	c, err := p.c.CreateTeamCtx(t.inner(), bits)
	if err != nil {
		return nil, err
	}
	team := p.world
	if t != nil {
		team = t
	}
	return &PE{c: c, world: p.world, shared: p.shared, pe: p, team: team, quietFree: c.QuietWord()}, nil
}

// Team returns the team a context was created on (shmem_ctx_get_team):
// TeamWorld for the PE itself and for contexts of PE.CreateCtx.
func (p *PE) Team() *Team {
	if p.zero() {
		return nil
	}
	return p.team
}

// DefaultCtx returns the PE's default context (SHMEM_CTX_DEFAULT): the PE
// itself, for a context the PE it was made on.
func (p *PE) DefaultCtx() *PE {
	if p.zero() {
		return nil
	}
	return p.pe
}

// CtxOptions returns the options the context was created with, or'ed
// together; 0 for the default context.
func (p *PE) CtxOptions() CtxOption {
	if p.zero() {
		return 0
	}
	return CtxOption(p.c.CtxOptions())
}

// Destroy completes a context's operations and ends it, closing its
// connections (shmem_ctx_destroy); the context must not be used during or
// after the call. Destroying it twice does nothing, and so does Destroy
// on a nil *PE (SHMEM_CTX_INVALID: what a failed CreateCtx returned);
// calling it on a PE (not a context) or on a zero PE is
// ErrInvalidArgument.
func (p *PE) Destroy() error {
	if p == nil {
		return nil
	}
	if p.zero() {
		return zeroPE("Destroy")
	}
	return p.c.Destroy()
}
