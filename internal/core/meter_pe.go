package core

import "slices"

// meter turns the new PE p's metrics on when its Config asks: a meter
// for the PE and the counts of p itself.
func (p *PE) meter() {
	s := p.s
	if !s.cfg.Metrics {
		return
	}
	s.meter = newMeter(int(s.pctl.Load()))
	p.mblock = s.meter.own
	p.counts = s.meter.newCounts(p.mblock, p.npes, s.pathKind)
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
// block and counts of its own.
func (s *state) meterCtx(c *PE, ranks []int) {
	if s.meter == nil {
		return
	}
	c.mblock = s.meter.newBlock()
	kind := s.pathKind
	if ranks != nil {
		kind = func(i int) PathKind { return s.pathKind(ranks[i]) }
	}
	c.counts = s.meter.newCounts(c.mblock, len(c.paths), kind)
}

// retireCtx folds a destroyed context's counters into the PE's totals.
func (s *state) retireCtx(c *PE) {
	if c.mblock != nil {
		s.meter.retire(c.mblock, c.counts)
	}
}

// countLocal counts a Quiet or Fence (path kind PathAll) of this handle
// and returns its cell when it is to be timed, as Count does. It inlines
// to a nil check when metrics are off. Quiet counts every Quiet of the
// handle, so also those a barrier, Finalize or a context's Destroy runs.
func (p *PE) countLocal(op MeterOp) *Cell {
	if c := p.counts; c != nil {
		return c.count(&c.all[op], 0)
	}
	return nil
}

// sameKinds returns n paths' kinds, all k.
func sameKinds(n int, k PathKind) []PathKind {
	ks := make([]PathKind, n)
	for i := range ks {
		ks[i] = k
	}
	return ks
}
