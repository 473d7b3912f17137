package core

import (
	"slices"
	"time"

	"github.com/goshmem/shmem/transport"
)

// metered returns the handle the user gets for the new PE p: p itself
// without metrics, else a copy of p with a meterBlock of its own and metered
// paths.
func (p *PE) metered() *PE {
	s := p.s
	if !s.cfg.Metrics {
		return p
	}
	s.meter = newMeter(&s.pctl)
	u := &PE{s: s, engines: p.engines, counts: s.meter.own}
	u.paths = s.meter.meterPaths(p.paths, s.pathKind, u.counts)
	return u
}

// pathKind returns the metrics' kind of the path to world rank r.
func (s *state) pathKind(r int) PathKind {
	switch {
	case s.cfg.PathKinds != nil:
		return s.cfg.PathKinds[r]
	case slices.Contains(s.cfg.Shared, r):
		return PathShm
	}
	return PathTCP
}

// meterCtx gives the new context c (on team ranks, nil for the world) a
// meterBlock and metered paths.
func (s *state) meterCtx(c *PE, ranks []int) {
	if s.meter == nil {
		return
	}
	c.counts = s.meter.newBlock()
	kind := s.pathKind
	if ranks != nil {
		kind = func(i int) PathKind { return s.pathKind(ranks[i]) }
	}
	c.paths = s.meter.meterPaths(c.paths, kind, c.counts)
}

// retireCtx folds a destroyed context's counters into the PE's totals.
func (s *state) retireCtx(c *PE) {
	if c.counts != nil {
		s.meter.retire(c.counts)
	}
}

// meteredQuiet is Quiet counted (and sampled) as OpQuiet.
func (p *PE) meteredQuiet() error {
	c := &p.counts.cells[PathAll][OpQuiet]
	if !p.s.meter.begin(c, 0) {
		return p.quiet()
	}
	t0 := time.Now()
	err := p.quiet()
	c.observe(t0)
	return err
}

// fenceCounted counts a Fence as OpFence; it waits for nothing, so it
// is not timed.
func (p *PE) fenceCounted() {
	p.s.meter.begin(&p.counts.cells[PathAll][OpFence], 0)
}

var _ transport.AtomicNBIPath = (*meteredPath)(nil)

// sameKinds returns n paths' kinds, all k.
func sameKinds(n int, k PathKind) []PathKind {
	ks := make([]PathKind, n)
	for i := range ks {
		ks[i] = k
	}
	return ks
}
