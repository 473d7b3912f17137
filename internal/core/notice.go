package core

import "sync"

// notices wakes the goroutines of a PE that wait for the coordinator's
// answer to an agreement (AgreeChecked) when the PE's state changes: a
// failure, a GlobalExit, an abort verdict, Finalize, a scheduled round of
// peer checks. Those waiters cannot sleep on the bell, since they also
// wait on the answer's channel; without notices they would have to look
// every few milliseconds, which in a simulated world of 16384 PEs, all in
// Finalize's agreement, is most of the CPU.
//
// A waiter takes the channel (wait) before it reads the state, so a
// change made after that read closes the channel it holds.
type notices struct {
	mu sync.Mutex
	ch chan struct{} // closed and dropped at each notice; nil when none waits
}

// wait returns the channel the next notice closes.
func (n *notices) wait() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ch == nil {
		n.ch = make(chan struct{})
	}
	return n.ch
}

// changed tells the PE's waiters that its state changed (finalized,
// exited, a failure, an abort): those on the bell and those in an
// agreement.
func (s *state) changed() {
	s.bell.Ring()
	s.wake.notify()
}

// notify wakes every goroutine holding a channel from wait. It costs a
// lock and nothing else when none does.
func (n *notices) notify() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ch != nil {
		close(n.ch)
		n.ch = nil
	}
}
