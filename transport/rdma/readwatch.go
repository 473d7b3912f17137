package rdma

import (
	"sync"
	"sync/atomic"
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
// lane that keeps reading re-arms the timer once per OpTimeout, not per
// operation, and a read costs two atomic stores and a load: the lock is
// taken only to arm the timer.
//
// No read goes unwatched: start stores the deadline, then looks at the
// timer; fire disarms, then looks at the deadline. Either start sees the
// timer disarmed and arms it, or fire sees the deadline and re-arms for it.
type readWatch struct {
	deadline atomic.Int64 // clock ns the current read must end by; 0: nobody reads
	at       atomic.Int64 // clock ns the timer fires at; 0: not armed
	mu       sync.Mutex   // serialises arming and firing
	closed   bool         // guarded by mu
	clk      clock
	timer    *time.Timer
	expire   func()
}

func newReadWatch(clk clock, expire func()) *readWatch {
	w := &readWatch{clk: clk, expire: expire}
	w.timer = time.AfterFunc(time.Hour, func() { w.fire(w.clk.now()) })
	w.timer.Stop()
	return w
}

// start watches a read that must end by deadline (clock ns, above 0).
func (w *readWatch) start(deadline int64) {
	w.deadline.Store(deadline)
	if a := w.at.Load(); a != 0 && a <= deadline {
		return // the armed timer fires first and will find this read
	}
	w.mu.Lock()
	if a := w.at.Load(); !w.closed && (a == 0 || deadline < a) {
		w.at.Store(deadline)
		w.timer.Reset(time.Duration(deadline - w.clk.now()))
	}
	w.mu.Unlock()
}

// stop ends the watch of the current read. An armed timer stays armed and
// will find nobody reading.
func (w *readWatch) stop() { w.deadline.Store(0) }

// close stops the timer for good (the lane failed).
func (w *readWatch) close() {
	w.mu.Lock()
	w.closed = true
	w.at.Store(0)
	w.timer.Stop()
	w.mu.Unlock()
}

// fire is the timer's callback at now: it expires the read in progress if
// its deadline has passed, re-arms for it if not, and disarms when nobody
// reads. (A callback of a timer that start reset meanwhile may run too;
// it finds the same state and does the same.)
func (w *readWatch) fire(now int64) {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	w.at.Store(0) // before the deadline's load: see the type's comment
	d := w.deadline.Load()
	expired := false
	switch {
	case d == 0:
	case now >= d:
		expired = w.deadline.CompareAndSwap(d, 0)
	default:
		w.at.Store(d)
		w.timer.Reset(time.Duration(d - now))
	}
	w.mu.Unlock()
	if expired {
		w.expire()
	}
}
