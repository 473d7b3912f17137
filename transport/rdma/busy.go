package rdma

import (
	"io"
	"net"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/goshmem/shmem/transport"
)

// pollBudget is what a node's connections share for busy polling: at most
// one read polls at a time, for at most budget, which adapts.
//
// Why one: two polling reads on two Ps would hold two cores. With a single
// P (GOMAXPROCS=1, as every PE shmemrun binds to one CPU has) the rule is
// lifted: there pollers share the one P and hold no more than one core,
// and a read the rule parked would wait for the runtime's network poller,
// which a polling goroutine's Gosched never reaches (the run queue comes
// first), until the poller's budget ran out. That parked the data of a
// put-and-wait ping-pong behind a poll for acknowledgements on the other
// connection in about one run in three: 180 µs a round trip instead of
// 50 (C API, 2 PEs over TCP).
//
// Why adapt: polling pays when the answer comes while the reader polls (a
// quiet machine: the peer runs on its own core), and costs everyone when
// the peer is not running (cores shared with other work), since the poller
// then holds a core the peer needs. A poll that expires halves the budget,
// down to nothing (reads park at once); a parked read whose data came
// within max shows that polling would have paid, and restores it.
//
// Contention stops polling outright: OS yields inside polls that return
// only after stolen (another thread ran on this core meanwhile), strikes
// times in a row within strikeWindow, mean the cores are oversubscribed, where polling makes
// every round trip wait for the scheduler (measured with two CPU-bound
// processes beside two PEs on 2 cores: put+quiet 144 µs polling, 37 µs
// parked). One late yield is not enough: kernel work and the process's own
// threads take the core now and then, most of all during bulk transfers.
// Polling then rests for a back-off that doubles, from minRest up to
// maxRest, while contention persists, and halves after an uncontended poll
// that was answered. maxRest is short so that polling resumes soon after
// the load has gone.
type pollBudget struct {
	max     time.Duration
	budget  atomic.Int64 // ns a read may poll now, 0..max
	polling atomic.Int32 // the node's reads polling now
	restTo  atomic.Int64 // unix ns before which nobody polls
	rest    atomic.Int64 // ns of the next rest
	late    atomic.Int32 // late yields in a row
	streak  atomic.Int64 // unix ns of the first of them (strikeWindow)
	probes  atomic.Int32 // reads started without a budget (probeEvery)
	// servers watches the node's accepted connections for a locked
	// caller's poll (Config.LockedCallers); nil otherwise.
	servers *readyWatch
	// osYield gives up the thread's core (transport.OSYield; tests
	// stand in a yield that returns late).
	osYield func()
	// onRest runs when a rest starts (Config.OnContended); nil: nothing.
	onRest func()
}

const (
	stolen = 50 * time.Microsecond // a yield that long means another thread ran

	// sliceStolen: a yield that long handed the core to another process
	// for a time slice, and the poll parks at once (and strikes, as a
	// late yield of the timed check does). Shorter late yields are
	// mostly the process's own threads (the C API's caller and the
	// node's server share the PE's core), which must not end a poll.
	// Measured beside two CPU-bound processes on the 2 cores, 2 PEs over
	// TCP, medians (BENCHMARKS.md): put+quiet 1.7-1.8 ms before, 0.54-
	// 0.64 ms after (C, Go); the ping-pong 4.3-4.6 ms before, 0.25-0.42
	// ms after (OSHMEM: 0.12 and 0.11 ms). Parking at stolen (50 µs)
	// did a little better under load; idle, the C API's blocking calls
	// read 6-11% slower with it and 2-10% with this (8 paired rounds
	// each, inside the spread). This one only a slice reaches, not the
	// PE's own threads.
	sliceStolen = 500 * time.Microsecond

	// probeEvery: one read in this many polls for the whole max though
	// the budget is spent. A spent budget comes back when a parked read's
	// data arrives within max (parkedFor), but parked reads can be what
	// makes the data late: a C API waiter on the PE's core answered 90 µs
	// after each parked read, never within max, so the budget stayed
	// spent and a put-and-wait ping-pong over TCP took 180 µs a round
	// trip instead of 50. A probe that is answered restores the budget.
	probeEvery = 64

	// lockedYieldAfter: a locked caller's poll (Config.LockedCallers)
	// yields to the process's goroutines only after polling this long,
	// or when one of the node's servers has a request to read.
	// From a goroutine locked to its thread runtime.Gosched hands the P to
	// another thread, which runs the rest and hands it back: two context
	// switches, about 2 µs each on the PE's one core. Yielding every 4
	// reads cost a C get over TCP 4-5 µs (18.5 against 14.4 µs, and 13 in
	// Go). Most answers come within it (an 8-byte round trip is 10-15 µs
	// here); past it the poll yields as any other, so the process's other
	// goroutines (the control plane's, timers) wait at most this long.
	lockedYieldAfter = 20 * time.Microsecond
	strikes          = 3

	// strikeWindow: the strikes late yields must come within it. A poll
	// of a small round trip (10-15 µs) ends before its 256th yield, the
	// one an on-time return resets the count with, so without a window
	// the late yields added up across seconds: on a VM whose kernel
	// threads (kdamond) take a slice every few hundred ms, every third
	// one started a rest, and 8-byte gets and fetch-adds over TCP parked
	// for most of a run (median 30-60 µs instead of 13, in 3 runs of 4
	// after a bulk phase). Oversubscribed cores return late yields one
	// slice (a few ms) apart, well within it.
	strikeWindow = 50 * time.Millisecond
	minRest      = 10 * time.Millisecond
	maxRest      = 100 * time.Millisecond
)

func newPollBudget(max time.Duration) *pollBudget {
	b := &pollBudget{max: max, osYield: transport.OSYield}
	b.budget.Store(int64(max))
	b.rest.Store(int64(minRest))
	return b
}

// take claims the right to poll, reporting whether the read may: always
// on a single P, else only when no other read polls. release gives it up.
func (b *pollBudget) take() bool {
	if b.polling.Add(1) == 1 || runtime.GOMAXPROCS(0) == 1 {
		return true
	}
	b.polling.Add(-1)
	return false
}

func (b *pollBudget) release() { b.polling.Add(-1) }

// allowed returns how long a read starting at now may poll.
func (b *pollBudget) allowed(now time.Time) time.Duration {
	if now.UnixNano() < b.restTo.Load() {
		return 0
	}
	v := b.budget.Load()
	if v == 0 && b.probes.Add(1)%probeEvery == 0 {
		return b.max // a probe: see probeEvery
	}
	return time.Duration(v)
}

// contended records a yield that took d and reports whether polling now
// rests: after strikes late ones in a row.
func (b *pollBudget) contended(now time.Time, d time.Duration) bool {
	if d < stolen {
		b.late.Store(0)
		return false
	}
	if t := now.UnixNano(); b.late.Load() == 0 || t-b.streak.Load() > int64(strikeWindow) {
		b.streak.Store(t) // the first of a new streak
		b.late.Store(1)
		return strikes <= 1
	}
	if b.late.Add(1) < strikes {
		return false
	}
	b.late.Store(0)
	r := b.rest.Load()
	b.restTo.Store(now.UnixNano() + r)
	b.rest.Store(min(2*r, int64(maxRest)))
	if b.onRest != nil {
		b.onRest()
	}
	return true
}

// answered records a poll that found its data without contention: polling
// pays, so the budget is whole again.
func (b *pollBudget) answered() {
	if b.budget.Load() != int64(b.max) {
		b.budget.Store(int64(b.max))
	}
	if r := b.rest.Load(); r > int64(minRest) {
		b.rest.Store(max(r/2, int64(minRest)))
	}
}

// expired records a poll that found nothing.
func (b *pollBudget) expired() {
	if v := b.budget.Load() / 2; v >= int64(time.Microsecond) {
		b.budget.Store(v)
	} else {
		b.budget.Store(0)
	}
}

// parkedFor records how long a parked read waited for its data.
func (b *pollBudget) parkedFor(d time.Duration) {
	if d < b.max {
		b.budget.Store(int64(b.max))
	}
}

// busyConn is a TCP connection whose reads poll the socket for a while
// before they park in the runtime's network poller.
//
// Why: a read that parks costs a thread wake-up when the data comes, and on
// a virtual machine waking an idle CPU costs 10-30 µs, as much as the round
// trip itself. MPI-style transports (UCX over TCP among them) poll instead;
// so does this, within the node's pollBudget, after each read that found
// nothing, so an idle connection costs nothing. The poll yields to the
// process's other goroutines (a PE waiting on the same core still runs) and
// to other threads and processes.
//
// A busyConn is read by one goroutine at a time, as every lane and server
// connection is; its fields are that reader's scratch space.
type busyConn struct {
	*net.TCPConn
	rc   syscall.RawConn
	pb   *pollBudget           // nil: reads park at once (SHMEM_BUSY_POLL=0)
	poll func(fd uintptr) bool // bound once, so Read does not allocate
	put  func(fd uintptr) bool // writeOnce, bound once

	// The writer's scratch space (writes are serialised by the
	// connection's owner, and may run beside the one reader).
	wbuf []byte
	wn   int
	werr error

	buf    []byte
	n      int
	err    error
	spun   bool // this Read has polled (or may not): park when nothing is there
	held   bool // this Read polls (pollBudget.take)
	parked bool // this Read returned to park; the next callback ends it
	// locked: the reads are a locked caller's (Config.LockedCallers), set
	// by the lane around them; see lockedYieldAfter.
	locked bool
	start  time.Time
	limit  time.Duration
}

// newBusyConn wraps c; a connection that is not TCP is returned unchanged.
// With a nil pb reads park at once, as the runtime's own do; the wrapper
// still makes small reads and writes raw system calls (sysRead, sysWrite).
func newBusyConn(c net.Conn, pb *pollBudget) net.Conn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return c
	}
	b := &busyConn{TCPConn: tc, rc: rc, pb: pb}
	b.poll = b.readOnce
	b.put = b.writeOnce
	return b
}

// rawWriteMax is the longest write made as a raw system call (sysWrite):
// a frame, an answer, a small record. Longer ones (bulk chunks, whose
// copy into the kernel takes tens of microseconds) go through the
// runtime's write, which lets it hand the P on while the copy runs.
const rawWriteMax = 16 << 10

// Write writes like net.Conn's Write (deadlines, close, partial writes),
// small writes as raw system calls.
func (b *busyConn) Write(p []byte) (int, error) {
	if len(p) > rawWriteMax || len(p) == 0 {
		return b.TCPConn.Write(p)
	}
	b.wbuf, b.wn, b.werr = p, 0, nil
	err := b.rc.Write(b.put)
	n := b.wn
	b.wbuf = nil
	if err == nil && b.werr != nil {
		err = &net.OpError{Op: "write", Net: "tcp", Source: b.LocalAddr(), Addr: b.RemoteAddr(), Err: os.NewSyscallError("write", b.werr)}
	}
	return n, err
}

// writeOnce is the RawConn callback of Write: it returns false to wait
// until the socket is writable (then it runs again), true once the write
// is done or failed.
func (b *busyConn) writeOnce(fd uintptr) bool {
	for b.wn < len(b.wbuf) {
		n, err := sysWrite(int(fd), b.wbuf[b.wn:])
		switch err {
		case nil:
			b.wn += n
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			b.werr = err
			return true
		}
	}
	return true
}

// Read reads like net.Conn's Read, polling first within the budget.
func (b *busyConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	b.buf, b.n, b.err, b.spun, b.parked = p, 0, nil, b.pb == nil, false
	err := b.rc.Read(b.poll)
	b.buf = nil
	if err != nil {
		return 0, err // closed, or the read deadline passed while parked
	}
	return b.n, b.err
}

// readOnce is the RawConn callback: it returns true once the read is done
// and false to park until the socket is readable (then it runs again).
func (b *busyConn) readOnce(fd uintptr) bool {
	if b.parked {
		b.parked = false
		if b.pb != nil {
			b.pb.parkedFor(time.Since(b.start))
		}
	}
	for i := 0; ; i++ {
		n, err := sysRead(int(fd), b.buf)
		if err == syscall.EINTR {
			continue
		}
		if err != syscall.EAGAIN {
			if b.held {
				b.pb.answered()
			}
			b.release()
			switch {
			case err != nil:
				b.err = err
			case n == 0:
				b.err = io.EOF
			default:
				b.n = n
			}
			return true
		}
		switch {
		case b.spun:
			return b.park()
		case !b.held:
			now := time.Now()
			b.limit = b.pb.allowed(now)
			if b.limit == 0 || !b.pb.take() {
				b.spun = true // no budget, resting, or another read polls
				return b.park()
			}
			b.held, b.start = true, now
		case i%32 == 0 && time.Since(b.start) > b.limit:
			b.release()
			b.pb.expired()
			b.spun = true
			return b.park()
		case i%4 == 0:
			// Goroutines of this process first (a PE waiting in Go), then
			// other threads: a thread outside the runtime that polls this
			// PE's memory on this core, as the C API's waits do, gets
			// the core only when this thread gives it up (C ping-pong
			// over TCP: 180 µs a round trip without, 45-53 with). The
			// 256th yield goes to other threads alone: it is the one
			// whose lateness counts toward a rest (yieldLate).
			strike := i%256 == 0
			if !strike && b.yieldsToGoroutines() {
				runtime.Gosched()
			}
			if b.yieldLate(strike) {
				b.release()
				b.spun = true
				return b.park()
			}
		}
	}
}

// yieldLate gives the thread's core to other threads and reports whether
// the poll must park: the yield came back a time slice late (sliceStolen),
// or, when strike is set, late at all (stolen) for the strikes'th time in
// a row, which starts a rest (pollBudget.contended). Every yield is timed
// (two reads of the monotonic clock, which time.Since of the poll's start
// makes): on a core shared with a CPU-bound process one yield can hand it
// over for a whole slice, and a poll used to make 64 untimed ones before
// its timed one. (Gosched is not timed: a goroutine of this process
// running meanwhile is no sign of oversubscription.)
func (b *busyConn) yieldLate(strike bool) bool {
	t := time.Since(b.start)
	b.pb.osYield()
	d := time.Since(b.start) - t
	switch {
	case d >= sliceStolen:
		b.pb.contended(time.Now(), d)
		return true
	case strike:
		return b.pb.contended(time.Now(), d)
	}
	return false
}

// yieldsToGoroutines reports whether the poll yields to the process's
// goroutines now: a locked caller's only after lockedYieldAfter, or
// while a request waits for one of the node's servers (readyWatch).
func (b *busyConn) yieldsToGoroutines() bool {
	return !b.locked || time.Since(b.start) > lockedYieldAfter || b.pb.servers.pending()
}

// park starts timing a wait in the runtime's poller and returns false.
func (b *busyConn) park() bool {
	if !b.parked && b.pb != nil {
		b.parked, b.start = true, time.Now()
	}
	return false
}

// release gives up the right to poll if this read holds it.
func (b *busyConn) release() {
	if b.held {
		b.held = false
		b.pb.release()
	}
}
