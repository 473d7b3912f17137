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

// teamColl is meteredColl for a team's Sync and Barrier; a nil team has
// no PE to count on and fails in f.
func teamColl(t *Team, k core.CollKind, f func() error) error {
	if t == nil || t.p == nil {
		return f()
	}
	return meteredColl(t.p.c, k, f)
}
