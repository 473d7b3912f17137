package transport

import (
	"sync"
	"sync/atomic"
	"time"
)

// wakeSlots bounds the wake-ups one Ring hands out at once: one per armed
// waiter, up to this many. A waiter beyond it still wakes at its timeout,
// and a PE rarely has more than a few goroutines waiting.
const wakeSlots = 64

// LocalBell is a Bell for waiters and writers in one process. Its waiters
// park on a channel instead of a futex, so a simulated world of a thousand
// PEs does not hold a thousand OS threads in the kernel. Neither Ring nor a
// waiter's sleep allocates: a ring drops tokens into a buffered channel and
// waiters reuse pooled timers, so a writer that rings a waiting peer on
// every put stays allocation-free.
type LocalBell struct {
	waiters atomic.Int32
	seq     atomic.Uint32
	wake    chan struct{} // one token per waiter to wake; extra tokens only cause a spurious re-check
	timers  sync.Pool     // *time.Timer
}

// NewLocalBell returns a bell with no waiters.
func NewLocalBell() *LocalBell { return &LocalBell{wake: make(chan struct{}, wakeSlots)} }

// Ring wakes every armed waiter; it costs one atomic load when none is armed.
func (b *LocalBell) Ring() {
	if b.waiters.Load() == 0 {
		return
	}
	b.seq.Add(1)
	for n := b.waiters.Load(); n > 0; n-- {
		select {
		case b.wake <- struct{}{}:
		default:
			return
		}
	}
}

// Armed reports whether a waiter is armed: whether a Ring now would wake
// one.
func (b *LocalBell) Armed() bool { return b.waiters.Load() > 0 }

// Arm registers a waiter and returns the ring count to pass to Wait.
func (b *LocalBell) Arm() uint32 {
	b.waiters.Add(1)
	return b.seq.Load()
}

// Wait blocks until a ring after Arm, or until timeout passes. It may also
// return early (a token left by an earlier ring); waiters re-check anyway.
// It reports whether the ring count moved since Arm.
func (b *LocalBell) Wait(armed uint32, timeout time.Duration) bool {
	if b.seq.Load() != armed {
		return true
	}
	t, _ := b.timers.Get().(*time.Timer)
	if t == nil {
		t = time.NewTimer(timeout)
	} else {
		t.Reset(timeout)
	}
	select {
	case <-b.wake:
	case <-t.C:
	}
	t.Stop() // since Go 1.23 a stopped timer delivers nothing stale after Reset
	b.timers.Put(t)
	return b.seq.Load() != armed
}

// Disarm unregisters a waiter that Arm registered.
func (b *LocalBell) Disarm() { b.waiters.Add(-1) }
