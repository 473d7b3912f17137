package shmem

import "github.com/goshmem/shmem/internal/core"

// meteredColl runs the collective f of kind k, counted and timed when
// c's metrics are on (WithMetrics). Collectives take microseconds, so
// every one is timed; without metrics this is one nil check.
func meteredColl(c *core.PE, k core.CollKind, f func() error) error {
	t0, ok := c.CollStart()
	err := f()
	if ok {
		c.CollDone(k, t0)
	}
	return err
}

// teamMetered reports whether t's Sync and Barrier are to be metered
// (meteredColl); a nil team has no PE to count on and fails in the call.
// Callers call the operation directly otherwise: a method value passed
// to meteredColl is an indirect call through a wrapper.
func teamMetered(t *Team) bool { return t != nil && t.p != nil && t.p.c.CollMetered() }
