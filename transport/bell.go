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
//
// A waiter that waits for one 8-byte word (a team operation's: ArmWord)
// is woken by RingRange only when the range covers its word, so a PE
// waiting in a barrier sleeps through the puts and atomics other PEs aim
// at its other words. That matters most when the waiter is locked to its
// thread, as a C thread is: each needless wake then costs two context
// switches on the PE's core, between the server that rang and the waiter,
// while the peer waits for the server's next answer (an 8-byte fetch-add
// over TCP from C to a PE in a barrier: ~5 µs).
type LocalBell struct {
	waiters atomic.Int32
	any     atomic.Int32 // waiters any write may concern: Arm's, and ArmWord's without a slot
	seq     atomic.Uint32
	words   [wordSlots]atomic.Uint64 // 1 + the offset an ArmWord waiter waits on; 0: free
	wake    chan struct{}            // one token per waiter to wake; extra tokens only cause a spurious re-check
	timers  sync.Pool                // *time.Timer
}

// wordSlots is how many ArmWord waiters a LocalBell tells apart; further
// ones count as waiting for any write. A PE's team operations wait one at
// a time per team, so a few slots cover the usual case.
const wordSlots = 4

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
	b.any.Add(1)
	b.waiters.Add(1)
	return b.seq.Load()
}

// ArmWord registers a waiter whose condition reads only the 8-byte word at
// heap offset off, and returns the ring count to pass to Wait and the
// slot to pass to DisarmWord. RingRange wakes it only for a range that
// covers the word; Ring always does.
//
// The slot is stored before the waiter count, and RingRange loads them in
// the other order, after the write it rings for: a write the waiter's
// re-check misses comes after that check, so its ring sees the slot.
func (b *LocalBell) ArmWord(off uint64) (armed uint32, slot int) {
	slot = -1
	for i := range b.words {
		if b.words[i].Load() == 0 && b.words[i].CompareAndSwap(0, off+1) {
			slot = i
			break
		}
	}
	if slot < 0 {
		b.any.Add(1)
	}
	b.waiters.Add(1)
	return b.seq.Load(), slot
}

// DisarmWord unregisters a waiter that ArmWord registered in slot.
func (b *LocalBell) DisarmWord(slot int) {
	b.waiters.Add(-1)
	if slot < 0 {
		b.any.Add(-1)
		return
	}
	b.words[slot].Store(0)
}

// RingRange is Ring for a write of the heap bytes [lo, hi): it skips the
// waiters of words outside the range (ArmWord) and reports whether it rang.
// Writes to memory outside the heap (statics) pass their own offsets,
// which no word waiter's overlap.
func (b *LocalBell) RingRange(lo, hi uint64) bool {
	if b.waiters.Load() == 0 {
		return false
	}
	if b.any.Load() == 0 && !b.wordIn(lo, hi) {
		return false
	}
	b.Ring()
	return true
}

// wordIn reports whether an ArmWord waiter's word overlaps [lo, hi).
func (b *LocalBell) wordIn(lo, hi uint64) bool {
	for i := range b.words {
		if w := b.words[i].Load(); w != 0 && w-1 < hi && lo < w+7 {
			return true
		}
	}
	return false
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
func (b *LocalBell) Disarm() {
	b.waiters.Add(-1)
	b.any.Add(-1)
}
