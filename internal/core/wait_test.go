package core

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/goshmem/shmem/transport"
)

// scriptedBell is a Bell whose every Wait returns at once, reporting a ring
// or a timeout as rung says, and counts its Waits.
type scriptedBell struct {
	transport.Bell
	rung  bool
	waits atomic.Int32
}

func (b *scriptedBell) Wait(uint32, time.Duration) bool {
	b.waits.Add(1)
	return b.rung
}

// TestWaitPollsOnlyAfterARing: a wait polls for Spin after a sleep that a
// ring ended, and only checks once more after one that timed out, so a PE
// that waits long does not burn a core every backstop wake-up.
func TestWaitPollsOnlyAfterARing(t *testing.T) {
	for _, rung := range []bool{false, true} {
		bell := &scriptedBell{rung: rung}
		w := newFakeWorldWith(t, 2, func(c *Config) {
			if c.Rank == 0 {
				bell.Bell = c.Bell
				c.Bell = bell
				c.Spin = 10 * time.Millisecond
			}
		})
		// Count the checks between the first Wait's return and the third's:
		// after a ring each poll spins (at least 64 checks past the tight
		// ones before it first looks at the clock), after a timeout not.
		var between atomic.Int32
		cond := func() bool {
			switch n := bell.waits.Load(); {
			case n == 0:
				return false
			case n < 3:
				between.Add(1)
				return false
			default:
				return true
			}
		}
		if err := w.pes[0].WaitLocal("test_wait", cond); err != nil {
			t.Fatal(err)
		}
		got, limit := int(between.Load()), 2*(tightChecks+1)
		if rung && got <= limit {
			t.Errorf("after rings: %d checks between the sleeps, want a poll (> %d)", got, limit)
		}
		if !rung && got > limit {
			t.Errorf("after timeouts: %d checks between the sleeps, want at most %d", got, limit)
		}
	}
}
