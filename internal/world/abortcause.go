package world

import (
	"fmt"
	"strings"
	"time"

	"github.com/goshmem/shmem/actors"
	"github.com/goshmem/shmem/internal/core"
	"github.com/goshmem/shmem/internal/world/internal/lane"
)

// A peer that closes its control link after a failure of its own (its
// Init failed: lane.AbortReason) is rarely the PE that failed: its Init
// failed because another PE died, whose loss this PE finds a moment
// later (that link's end is read on another goroutine). Once this PE
// runs, its actor hears of such a peer only after the cause is known, or
// after abortGrace: the errors of its operations name the PE recorded
// failed first, and PE 1's barrier named PE 2, which had aborted its Init
// after PE 0's kill, instead of PE 0 (the fault suite, seed
// 1796334523677717189). Before the PE runs, blameInit does this.

// abortGrace bounds how long the failure of a peer that aborted waits for
// its cause: long against the moment the dead PE's link takes to end
// (both ends were cut together), short against failure detection.
const abortGrace = 250 * time.Millisecond

// isAbort reports whether a detection's reason is a peer's abort.
func isAbort(reason string) bool { return strings.Contains(reason, lane.AbortReason) }

// holdAbort delivers notice, a peer's abort, to this PE's actor (me) once
// this PE knows a failure that is not an abort, or after abortGrace.
func (c *control) holdAbort(me int, notice *actors.PEFailed) {
	go func() {
		timer := time.NewTimer(abortGrace)
		defer timer.Stop()
		tick := time.NewTicker(watchEvery) // a same-host process check each
		defer tick.Stop()
	wait:
		for {
			changed := c.loss.changed()
			if c.causeKnown() {
				break
			}
			select {
			case <-changed:
			case <-tick.C:
			case <-timer.C:
				break wait
			}
		}
		c.mu.Lock() // after the notice of the cause (detected)
		defer c.mu.Unlock()
		c.sys.Root.Send(c.sys.NewLocalPID(core.PEActor(me)), notice)
	}()
}

// causeKnown reports whether this PE knows of a failure that is not an
// abort: detected, or a same-host process found ended now (which it
// then detects, ahead of the abort).
func (c *control) causeKnown() bool {
	if _, _, ok := c.loss.firstCause(); ok {
		return true
	}
	c.mu.Lock()
	ended := c.ended
	c.mu.Unlock()
	if ended == nil {
		return false
	}
	if r, why, ok := ended(); ok {
		c.detected(r, why)
		return true
	}
	return false
}

// setEnded names how this PE finds a same-host PE whose process ended
// (joiner.endedProcess).
func (c *control) setEnded(ended func() (int, string, bool)) {
	c.mu.Lock()
	c.ended = ended
	c.mu.Unlock()
}

// endedCause is endedProcess with the reason a detection gives.
func (j *joiner) endedCause() (int, string, bool) {
	r, ok := j.endedProcess()
	if !ok {
		return 0, "", false
	}
	return r, fmt.Sprintf("its process (pid %d) has ended", j.recs[r].PID), true
}
