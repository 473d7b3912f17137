package core

import "time"

// CollKind is a kind of collective the metrics count.
type CollKind uint8

// The collective kinds (CollKind.String).
const (
	CollBarrier CollKind = iota // BarrierAll, Team.Barrier
	CollSync                    // SyncAll, Team.Sync
	CollBroadcast
	CollCollect
	CollFCollect
	CollAlltoall
	CollAlltoalls
	CollReduce
	NumCollKinds
)

// String names the kind in the metrics' kind label.
func (k CollKind) String() string {
	return [NumCollKinds]string{"barrier", "sync", "broadcast", "collect", "fcollect", "alltoall", "alltoalls", "reduce"}[k]
}

// CollMetered reports whether the PE meters collectives (CollStart's
// condition), inlined where the caller skips the metering altogether.
func (p *PE) CollMetered() bool { return p.s.meter != nil && p.s.pctl.Load() > 0 }

// CollStart returns the time a collective starts, for CollDone, and
// whether the PE meters (metrics on, level above 0). A collective costs
// microseconds, so every one is timed, with atomic counters.
func (p *PE) CollStart() (time.Time, bool) {
	if p.s.meter == nil || p.s.pctl.Load() <= 0 {
		return time.Time{}, false
	}
	return time.Now(), true
}

// CollDone records a collective of kind k that CollStart started at t0,
// failed or not.
func (p *PE) CollDone(k CollKind, t0 time.Time) {
	c := &p.s.meter.coll[k]
	c.count.Add(1)
	c.nanos.Add(uint64(time.Since(t0)))
}
