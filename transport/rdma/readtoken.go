package rdma

import "sync/atomic"

// readToken says who reads a lane's socket: at most one holder at a time,
// who owns the lane's read buffer. A caller waiting for its own response
// takes it with one CAS when it is free (the common case), reads, and
// gives it back with one store and one load; only a party that finds it
// held registers as a waiter and is woken through freed.
//
// Why not a channel of capacity one, as before: a non-blocking receive and
// a send cost about 200 instructions per operation, for a token that is
// almost always free.
//
// No wake-up is lost: a waiter registers, then tries to take; release
// frees, then looks for waiters. Both are sequentially consistent, so
// either the waiter's try sees the token free or release sees the waiter
// and posts to freed, whose one buffered post stays until a waiter takes
// it. A waiter woken while someone else took the token first waits again;
// that holder's release posts again.
type readToken struct {
	held    atomic.Bool
	waiters atomic.Int32
	freed   chan struct{} // capacity 1: a release's news for a waiter; made with the lane
}

// tryTake takes the token if it is free.
func (t *readToken) tryTake() bool { return t.held.CompareAndSwap(false, true) }

// release gives the token back; only its holder calls it.
func (t *readToken) release() {
	t.held.Store(false)
	if t.waiters.Load() > 0 {
		t.post()
	}
}

// post tells a waiter the token may be free; it never blocks.
func (t *readToken) post() {
	select {
	case t.freed <- struct{}{}:
	default: // a post is already waiting for a waiter
	}
}

// take waits for the token and reports true, or false if stop closes
// first (a nil stop waits for good).
func (t *readToken) take(stop <-chan struct{}) bool {
	if t.tryTake() {
		return true
	}
	t.wait()
	defer t.unwait()
	for !t.tryTake() {
		select {
		case <-t.freed:
		case <-stop:
			return false
		}
	}
	return true
}

// wait registers a waiter that will select on freed; unwait ends that.
// Between them the waiter must try to take the token after every
// receive from freed.
func (t *readToken) wait() { t.waiters.Add(1) }

// unwait deregisters a waiter. A post it leaves unreceived stays for the
// others; if it consumed one without taking the token, the holder that
// beat it to the token posts again on release.
func (t *readToken) unwait() { t.waiters.Add(-1) }
