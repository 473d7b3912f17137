package core

import (
	"unsafe"

	"github.com/goshmem/shmem/internal/coll"
	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
)

// The context options of shmem_ctx_create, as bits.
const (
	CtxPrivate    = 1 << iota // used by one goroutine at a time (SHMEM_CTX_PRIVATE)
	CtxSerialized             // never used by two goroutines at once (SHMEM_CTX_SERIALIZED)
	CtxNostore                // issues no stores that its Quiet must complete (SHMEM_CTX_NOSTORE)
	ctxOptionsEnd
)

// ctxInfo is what a context has beyond its PE's state.
type ctxInfo struct {
	opts    int
	team    *coll.Team // the team it was made from; nil for the world
	ranks   []int      // world rank of each of the team's PE numbers; nil for the world
	streams []transport.Stream
}

// CreateCtx returns a context on the world with options opts (CtxPrivate
// and friends). See CreateTeamCtx.
func (p *PE) CreateCtx(opts int) (*PE, error) { return p.CreateTeamCtx(nil, opts) }

// CreateTeamCtx returns a context: a handle on the same PE whose puts,
// gets and atomics complete by its own Fence and Quiet. Each engine that
// can (transport.Streamer) opens a stream for it, so its Quiet waits for
// its own operations only; paths of other engines complete before they
// return or are shared with the PE (a Quiet on either then completes
// both, which is more than the model asks, never less). With team t the
// target PE numbers of the context's operations are t's; nil is the world.
func (p *PE) CreateTeamCtx(t *coll.Team, opts int) (*PE, error) {
	const op = "CreateCtx"
	if err := p.Check(op); err != nil {
		return nil, err
	}
	if opts < 0 || opts >= ctxOptionsEnd {
		return nil, errs.New(op, p.MyPE(), errs.NoPE, errs.ErrInvalidArgument, "unknown context options %#x", opts)
	}
	info := &ctxInfo{opts: opts}
	members := []int(nil)
	if t != nil {
		if err := t.Usable(op); err != nil {
			return nil, err
		}
		info.team, info.ranks = t, t.Members()
		members = info.ranks
	}
	// One stream per distinct engine, opened in the order of the PE's
	// engines; a path takes its engine's stream.
	streams := map[transport.Engine]transport.Stream{}
	engines := make([]transport.Engine, 0, len(p.s.engines))
	for _, e := range p.s.engines {
		st, ok := e.(transport.Streamer)
		if !ok {
			engines = append(engines, e)
			continue
		}
		s, err := st.NewStream()
		if err != nil {
			// The engine has none to give (a wrapper over one without):
			// the context shares it.
			engines = append(engines, e)
			continue
		}
		streams[e] = s
		info.streams = append(info.streams, s)
		engines = append(engines, s)
	}
	n := p.s.cfg.NPEs
	if members != nil {
		n = len(members)
	}
	paths := make([]transport.Path, n)
	for i := range paths {
		w := i
		if members != nil {
			w = members[i]
		}
		wp := p.s.path(w)
		paths[i] = wp
		// A network path is settled (settle.go): the stream's path to the
		// same peer is made from the raw one and settled alike.
		raw, settled := wp.(settledPath)
		inner := wp
		if settled {
			inner = raw.Path
		}
		if s, ok := streams[inner.Engine()]; ok {
			if sp, ok := s.Path(inner); ok {
				if settled {
					sp = settledPath{Path: sp, s: p.s}
				}
				paths[i] = sp
			}
		}
	}
	c := &PE{s: p.s, isCtx: true, paths: paths, engines: engines, ctx: info, npes: len(paths), quietFree: new(uint32), mapped: new(unsafe.Pointer)}
	p.s.meterCtx(c, members)
	p.s.ctxMu.Lock()
	if p.s.ctxs == nil {
		p.s.ctxs = map[*PE]struct{}{}
	}
	p.s.ctxs[c] = struct{}{}
	p.s.ctxMu.Unlock()
	return c, nil
}

// quietContexts completes the operations of every context not destroyed:
// Finalize's barrier completes the default context's only, and closing
// the transports would drop the rest.
func (p *PE) quietContexts() error {
	p.s.ctxMu.Lock()
	live := make([]*PE, 0, len(p.s.ctxs))
	for c := range p.s.ctxs {
		live = append(live, c)
	}
	p.s.ctxMu.Unlock()
	var err error
	for _, c := range live {
		if e := c.Quiet(); e != nil && err == nil {
			err = e
		}
	}
	return err
}

// CtxOptions returns the options the context was created with; 0 for the
// PE itself.
func (p *PE) CtxOptions() int {
	if p.ctx == nil {
		return 0
	}
	return p.ctx.opts
}

// CtxTeam returns the team a context was made from, or nil for the world
// (the PE itself and contexts made by CreateCtx).
func (p *PE) CtxTeam() *coll.Team {
	if p.ctx == nil {
		return nil
	}
	return p.ctx.team
}

// worldRank returns the world rank of the context's PE number pe, which is
// in range.
func (p *PE) worldRank(pe int) int {
	if p.ctx == nil || p.ctx.ranks == nil {
		return pe
	}
	return p.ctx.ranks[pe]
}

// outOfRange is the error for a target PE number outside the PE's world
// or the context's team.
func (p *PE) outOfRange(op string, pe int) error {
	if p.ctx != nil && p.ctx.team != nil {
		return errs.New(op, p.s.cfg.Rank, pe, errs.ErrInvalidArgument, "PE %d is not in team %s of %d", pe, p.ctx.team.ID(), p.npes)
	}
	return errs.New(op, p.s.cfg.Rank, pe, errs.ErrInvalidArgument, "PE %d is not in a world of %d", pe, p.s.cfg.NPEs)
}

// Destroy completes a context's operations and ends it, closing its
// streams. Only contexts can be destroyed; the PE itself ends with
// Finalize. The caller must not use the context during or after.
func (p *PE) Destroy() error {
	if !p.isCtx {
		return errs.New("Destroy", p.MyPE(), errs.NoPE, errs.ErrInvalidArgument, "not a context: use Finalize")
	}
	if p.destroyed.Load() {
		return nil
	}
	err := p.Quiet()
	if !p.destroyed.CompareAndSwap(false, true) {
		return nil
	}
	for _, s := range p.ctx.streams {
		_ = s.Close() // its operations were just completed
	}
	p.s.ctxMu.Lock()
	delete(p.s.ctxs, p)
	p.s.ctxMu.Unlock()
	p.s.retireCtx(p)
	return err
}

// shareableCtxs returns the live contexts made from team t without
// CtxPrivate: those shmem_team_destroy destroys with the team.
func (p *PE) shareableCtxs(t *coll.Team) []*PE {
	p.s.ctxMu.Lock()
	defer p.s.ctxMu.Unlock()
	var out []*PE
	for c := range p.s.ctxs {
		if c.ctx.team == t && c.ctx.opts&CtxPrivate == 0 {
			out = append(out, c)
		}
	}
	return out
}

// QuietTeamCtxs completes the operations of team t's shareable contexts,
// so that a Destroy of t delivers them before its closing sync.
func (p *PE) QuietTeamCtxs(t *coll.Team) error { return p.eachShareable(t, (*PE).Quiet) }

// DestroyTeamCtxs destroys team t's shareable contexts, as
// shmem_team_destroy does; the program destroys its private ones itself.
func (p *PE) DestroyTeamCtxs(t *coll.Team) error { return p.eachShareable(t, (*PE).Destroy) }

// eachShareable calls f on each of team t's shareable contexts, all of
// them whatever fails, and returns the first error.
func (p *PE) eachShareable(t *coll.Team, f func(*PE) error) error {
	var err error
	for _, c := range p.shareableCtxs(t) {
		if e := f(c); e != nil && err == nil {
			err = e
		}
	}
	return err
}
