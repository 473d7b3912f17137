package rdma

import (
	"io"
	"net"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
)

// busyConn is a TCP connection whose reads poll the socket for up to spin
// before they park in the runtime's network poller.
//
// Why: a read that parks costs a thread wake-up when the data comes, and on
// a virtual machine waking an idle CPU costs 10-30 µs, more than the round
// trip itself. MPI-style transports (UCX over TCP among them) poll instead;
// so does this, but only for spin after each read that found nothing, so
// an idle connection costs nothing. The poll yields to the process's other
// goroutines, so a PE waiting on the same core still runs, and at most one
// read of a node polls at a time (the others park at once), so a node with
// many connections burns at most one core.
//
// A busyConn is read by one goroutine at a time, as every lane and server
// connection is; its fields are that reader's scratch space.
type busyConn struct {
	*net.TCPConn
	rc      syscall.RawConn
	spin    time.Duration
	polling *atomic.Bool          // the node's: set while one of its reads polls
	poll    func(fd uintptr) bool // bound once, so Read does not allocate

	buf   []byte
	n     int
	err   error
	spun  bool // this Read has polled (or may not): park when nothing is there
	held  bool // this Read holds the node's polling slot
	start time.Time
}

// newBusyConn wraps c; spin <= 0, or a connection that is not TCP, returns
// c unchanged. polling is shared by the node's connections.
func newBusyConn(c net.Conn, spin time.Duration, polling *atomic.Bool) net.Conn {
	tc, ok := c.(*net.TCPConn)
	if !ok || spin <= 0 {
		return c
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return c
	}
	b := &busyConn{TCPConn: tc, rc: rc, spin: spin, polling: polling}
	b.poll = b.readOnce
	return b
}

// Read reads like net.Conn's Read, polling for up to spin first.
func (b *busyConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	b.buf, b.n, b.err, b.spun = p, 0, nil, false
	if err := b.rc.Read(b.poll); err != nil {
		b.buf = nil
		return 0, err // closed, or the read deadline passed while parked
	}
	b.buf = nil
	return b.n, b.err
}

// readOnce is the RawConn callback: it returns true once the read is done
// and false to park until the socket is readable (then it runs again).
func (b *busyConn) readOnce(fd uintptr) bool {
	for i := 0; ; i++ {
		// syscall.Read, not a raw syscall nor unix.Read: it tells the race
		// detector that the read synchronises with the peer's write, on the
		// same token net.Conn's writes use.
		n, err := syscall.Read(int(fd), b.buf)
		if err == syscall.EINTR {
			continue
		}
		if err != syscall.EAGAIN {
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
			return false
		case !b.held:
			if !b.polling.CompareAndSwap(false, true) {
				b.spun = true // another read of the node polls: park
				return false
			}
			b.held, b.start = true, time.Now()
		case i%32 == 0 && time.Since(b.start) > b.spin:
			b.release()
			b.spun = true
			return false
		case i%4 == 0:
			runtime.Gosched()
		}
	}
}

// release gives up the node's polling slot if this read holds it.
func (b *busyConn) release() {
	if b.held {
		b.held = false
		b.polling.Store(false)
	}
}
