package core

import (
	"sync/atomic"
	"time"

	"github.com/goshmem/shmem/transport"
)

// A program that spins on Test (or SignalFetch) keeps its goroutine
// running, and a PE bound to one core has one P: the runtime's network
// poller then runs only when sysmon looks, every 10 ms, so the network
// readers that would land the awaited write starve. A Test ping-pong over
// TCP took 190 ms a round trip, WaitUntil's 0.1 ms. So a PE with network
// paths naps on its bell, as a wait sleeps, when its Test misses come in a
// tight loop: every testNapEvery-th miss, if those misses took less than
// testLoopWindow (a Test now and then between computations never naps),
// for at most testNap. A write that lands rings the bell and ends the nap;
// the nap frees the P for the poller.
const (
	testNapEvery   = 64
	testLoopWindow = 100 * time.Microsecond
	testNap        = 200 * time.Microsecond
)

// testLoop is what a PE knows of its Test misses (Missed).
type testLoop struct {
	networked bool      // some path is not transport.Immediate: sockets' readers write the heap
	born      time.Time // the origin of last, for a monotonic reading in an int64
	misses    atomic.Uint32
	last      atomic.Int64  // ns since born of the last look at the loop's pace
	naps      atomic.Uint64 // naps taken (tests read it)
}

// Missed is called by a Test form whose condition was false, and by
// SignalFetch, which programs call in the same loops. Without network
// paths (every write into the heap is a store from another core) or under
// the simulator (Poll schedules) it does nothing; outside a tight loop it
// costs an increment, and a clock reading every testNapEvery misses.
func (p *PE) Missed() {
	s := p.s
	if !s.tests.networked || s.checks != nil {
		return
	}
	if s.tests.misses.Add(1)%testNapEvery != 0 {
		return
	}
	now := int64(time.Since(s.tests.born))
	if now-s.tests.last.Swap(now) > int64(testLoopWindow) {
		return
	}
	s.tests.naps.Add(1)
	if b, ok := s.bell.(*transport.LocalBell); ok {
		// Busy-polling readers ring this bell from their goroutines: the
		// wait parks on a channel, and the ring that lands the write
		// ends it.
		b.Wait(b.Arm(), testNap)
		b.Disarm()
		return
	}
	// A futex sleep would keep the P; a Go sleep frees it.
	time.Sleep(testNap)
}
