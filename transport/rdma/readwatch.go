package rdma

import (
	"sync"
	"time"
)

// readWatch bounds how long a caller holding a lane's read token may wait
// for its response: expire runs (and fails the lane) when a read outlives
// the deadline it started with.
//
// Why not a timer reset and stopped around every read: in Go's runtime
// that costs about 500 instructions per operation (callgrind, an 8-byte
// get or put+quiet over TCP, out of 9-14k), for a timer that practically
// never fires. Here the timer is armed lazily: a read stores its deadline,
// and the timer is reset only when it is not armed or armed for later.
// When it fires it looks at the read in progress: none, and it stays
// disarmed; one whose deadline has not come, and it waits for that. A
// read therefore costs two uncontended lock pairs, and a lane that keeps
// reading re-arms the timer once per OpTimeout, not per operation.
type readWatch struct {
	mu       sync.Mutex
	deadline int64 // unix ns the current read must end by; 0: nobody reads
	at       int64 // unix ns the timer fires at; 0: not armed
	closed   bool
	timer    *time.Timer
	expire   func()
}

func newReadWatch(expire func()) *readWatch {
	w := &readWatch{expire: expire}
	w.timer = time.AfterFunc(time.Hour, func() { w.fire(time.Now()) })
	w.timer.Stop()
	return w
}

// start watches a read that must end by deadline.
func (w *readWatch) start(deadline time.Time) {
	d := deadline.UnixNano()
	w.mu.Lock()
	w.deadline = d
	if !w.closed && (w.at == 0 || d < w.at) {
		w.at = d
		w.timer.Reset(time.Until(deadline))
	}
	w.mu.Unlock()
}

// stop ends the watch of the current read. An armed timer stays armed and
// will find nobody reading.
func (w *readWatch) stop() {
	w.mu.Lock()
	w.deadline = 0
	w.mu.Unlock()
}

// close stops the timer for good (the lane failed).
func (w *readWatch) close() {
	w.mu.Lock()
	w.closed, w.at = true, 0
	w.timer.Stop()
	w.mu.Unlock()
}

// fire is the timer's callback at now: it expires the read in progress if
// its deadline has passed, re-arms for it if not, and disarms when nobody
// reads. (A callback of a timer that start reset meanwhile may run too;
// it finds the same state and does the same.)
func (w *readWatch) fire(now time.Time) {
	w.mu.Lock()
	d, t := w.deadline, now.UnixNano()
	expired := false
	switch {
	case w.closed || d == 0:
		w.at = 0
	case t >= d:
		w.at, w.deadline, expired = 0, 0, true
	default:
		w.at = d
		w.timer.Reset(time.Duration(d - t))
	}
	w.mu.Unlock()
	if expired {
		w.expire()
	}
}
