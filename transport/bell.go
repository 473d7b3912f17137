package transport

import (
	"sync"
	"sync/atomic"
	"time"
)

// LocalBell is a Bell for waiters and writers in one process. Its waiters
// park on a channel instead of a futex, so a simulated world of a thousand
// PEs does not hold a thousand OS threads in the kernel.
type LocalBell struct {
	waiters atomic.Int32
	seq     atomic.Uint32
	mu      sync.Mutex
	ch      chan struct{} // closed and replaced on each ring that has waiters
}

// NewLocalBell returns a bell with no waiters.
func NewLocalBell() *LocalBell { return &LocalBell{ch: make(chan struct{})} }

// Ring wakes every armed waiter; it costs one atomic load when none is armed.
func (b *LocalBell) Ring() {
	if b.waiters.Load() == 0 {
		return
	}
	b.seq.Add(1)
	b.mu.Lock()
	close(b.ch)
	b.ch = make(chan struct{})
	b.mu.Unlock()
}

// Arm registers a waiter and returns the ring count to pass to Wait.
func (b *LocalBell) Arm() uint32 {
	b.waiters.Add(1)
	return b.seq.Load()
}

// Wait blocks until a ring after Arm, or until timeout passes.
func (b *LocalBell) Wait(armed uint32, timeout time.Duration) {
	b.mu.Lock()
	ch := b.ch
	b.mu.Unlock()
	if b.seq.Load() != armed {
		return
	}
	t := time.NewTimer(timeout)
	select {
	case <-ch:
	case <-t.C:
	}
	t.Stop()
}

// Disarm unregisters a waiter that Arm registered.
func (b *LocalBell) Disarm() { b.waiters.Add(-1) }
