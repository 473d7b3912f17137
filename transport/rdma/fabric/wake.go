package fabric

import "sync/atomic"

// wake is a broadcast wake-up: every goroutine waiting when broadcast is
// called is woken. A channel of capacity one wakes only one of several
// Quiets waiting at once, and the rest then wait out OpTimeout although
// nothing is left to wait for.
//
// A waiter takes the channel (wait) before it checks its condition, and
// the notifier changes the state before it broadcasts, so a change is never
// missed: either the waiter's check sees it, or its channel is closed.
// A channel is made only while someone waits, so a completion with no
// Quiet waiting costs one atomic swap.
type wake struct{ ch atomic.Pointer[chan struct{}] }

// wait returns the channel the next broadcast closes.
func (w *wake) wait() <-chan struct{} {
	for {
		if c := w.ch.Load(); c != nil {
			return *c
		}
		c := make(chan struct{})
		if w.ch.CompareAndSwap(nil, &c) {
			return c
		}
	}
}

// broadcast wakes every current waiter.
func (w *wake) broadcast() {
	if c := w.ch.Swap(nil); c != nil {
		close(*c)
	}
}
