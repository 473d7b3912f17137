package core

import (
	"sync/atomic"

	"github.com/goshmem/shmem/internal/coll"
)

// spareWaits is how many finished team waits a PE keeps. A program's
// steady state is a loop of a few collectives on a few teams; with more
// PEs than cores most of their waits outlast their polls and register
// (startLong). One spare served only a loop of one call: a loop of
// Broadcast, Reduce and BarrierAll made a longWait for nearly every wait
// (TestCollectivesAllocateNothing/mixed: 10 allocations per loop at 2
// PEs, 46 at 8). Eight cover the data collectives, the barrier and the
// sync of one team, or a few calls on a few teams.
const spareWaits = 8

// spares are a PE's finished team waits, each kept for the next wait of
// the same call on the same team, which then allocates nothing. Several
// goroutines of a PE may wait at once: a spare is taken by a
// compare-and-swap, so no two waits share one.
type spares struct {
	w    [spareWaits]atomic.Pointer[longWait]
	next atomic.Uint32 // the slot keep overwrites when none is free
}

// take returns a spare of p's waiting for k (the same call on the same
// team, or on the same word), whose every field a report reads is then
// already right; nil when none is. p matters: a context is a PE handle of
// its own over the same state, with its own count of PEs. An agreement or Finalize (b neither nil nor a
// team) waits once and is never kept. Only reusable keys are compared, so
// b's dynamic type is comparable.
func (s *spares) take(p *PE, k waitKey) *longWait {
	if !reusable(k.b) {
		return nil
	}
	for i := range s.w {
		w := s.w[i].Load()
		if w != nil && w.p == p && w.waitKey == k && s.w[i].CompareAndSwap(w, nil) {
			return w
		}
	}
	return nil
}

// reusable reports whether waits on b come again alike: a team's, or a
// word's (b nil: WaitUntil in a loop, a lock taken again).
func reusable(b coll.Blocked) bool {
	if b == nil {
		return true
	}
	_, team := b.(*coll.Team)
	return team
}

// keep keeps w, a finished wait, when its kind comes again (reusable): in
// a free slot, or in place of the spare kept longest ago.
func (s *spares) keep(w *longWait) {
	if !reusable(w.b) {
		return
	}
	for i := range s.w {
		if s.w[i].CompareAndSwap(nil, w) {
			return
		}
	}
	s.w[s.next.Add(1)%spareWaits].Store(w)
}
