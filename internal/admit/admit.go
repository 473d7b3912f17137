// Package admit accepts connections for goshmem's listeners (data lanes,
// control lanes, the rendezvous) the way a server facing strangers must: an
// accept error other than a closed listener is retried with backoff instead
// of ending the listener (one EMFILE must not stop a PE serving for good), at
// most MaxPending connections may be waiting to authenticate at once (a
// newer one closes the oldest, before a byte of it is read), and refusals are
// logged at most once per LogEvery so a flood cannot flood the log too.
package admit

import (
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Config tunes an Acceptor. Zero values take the defaults named per field.
type Config struct {
	// Name labels the listener in log lines ("rdma", "control").
	Name string
	// MaxPending bounds the connections accepted but not yet admitted
	// (their peer has not authenticated). Default 256: a world's PEs open
	// a few lanes each at start-up, well below it, while a stranger
	// holding thousands of idle sockets keeps at most this many, and only
	// until newer connections push them out.
	MaxPending int
	// LogEvery is the shortest interval between two refusal log lines.
	// Default 1 s; refusals in between are counted into the next line.
	LogEvery time.Duration
	// Logger receives the refusal and accept-error lines; nil discards.
	Logger *slog.Logger
	// TellEvicted makes Accept return connections that tell their client
	// Busy when evicted before the owner wrote to them, so that the
	// client can tell being turned away from being refused or from the
	// listener's process ending (netprobe.ListenerGone reads the line as
	// a live listener). The owner must write only through the returned
	// connection until it is admitted.
	TellEvicted bool
}

// Busy is the line an Acceptor with Config.TellEvicted writes, in
// plaintext, to a connection it evicts before the listener's owner wrote a
// byte to it. No goshmem endpoint starts its answer so (a TLS record, the
// job-secret hello "GSHA..."), so a client recognises it among its first
// bytes: the listener lives and shed its connection under load; dial again.
const Busy = "goshmem: busy, retry\n"

// IsBusy reports whether head, the first bytes a client read, is (the
// start of) Busy.
func IsBusy(head []byte) bool {
	n := min(len(head), len(Busy))
	return n > 0 && string(head[:n]) == Busy[:n]
}

// busyWrite bounds the write of Busy: a socket nobody wrote to yet has
// an empty send buffer, so it takes no time unless the system is out of
// buffers.
const busyWrite = 100 * time.Millisecond

// tellConn is a connection of an Acceptor with TellEvicted: writes
// through it mark it spoken, after which an eviction only closes it.
type tellConn struct {
	net.Conn
	st atomic.Uint32 // connSilent, connSpoken or connEvicted
}

const (
	connSilent = iota
	connSpoken
	connEvicted
)

func (c *tellConn) Write(b []byte) (int, error) {
	if !c.speak() {
		return 0, &net.OpError{Op: "write", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: net.ErrClosed}
	}
	return c.Conn.Write(b)
}

// speak marks c spoken; false if it was evicted first.
func (c *tellConn) speak() bool {
	return c.st.Load() == connSpoken || c.st.CompareAndSwap(connSilent, connSpoken)
}

// Speak tells the Acceptor that its owner is about to write to c, a
// connection Accept returned, other than through c (through the socket
// under it, Raw): from then on an eviction only closes c. It reports
// false when c was evicted first (its client was told Busy), and then the
// owner must not write. A connection of an Acceptor without TellEvicted
// is always spoken. Owners that write only through c need not call it.
func Speak(c net.Conn) bool {
	if tc, ok := c.(*tellConn); ok {
		return tc.speak()
	}
	return true
}

// Raw returns the connection under c, a connection Accept returned, as
// the listener accepted it (a *net.TCPConn from a TCP listener): an owner
// that needs the socket itself (system calls on its descriptor) uses it,
// calling Speak before its first write until c is admitted.
func Raw(c net.Conn) net.Conn {
	if tc, ok := c.(*tellConn); ok {
		return tc.Conn
	}
	return c
}

// CloseWrite closes the write side, when the connection has one.
func (c *tellConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return errors.ErrUnsupported
}

// evict tells the client Busy if nothing was written to it yet, and
// closes it.
func (c *tellConn) evict() {
	if c.st.CompareAndSwap(connSilent, connEvicted) {
		_ = c.Conn.SetWriteDeadline(time.Now().Add(busyWrite))
		_, _ = c.Conn.Write([]byte(Busy))
	}
	c.Conn.Close()
}

// Backoff bounds for retried accept errors, as net/http's Server uses: short
// enough that a transient EMFILE costs milliseconds, long enough that a
// persistent one does not spin a core.
const (
	minBackoff = 5 * time.Millisecond
	maxBackoff = time.Second
)

// Acceptor wraps a listener. Accept is called from one goroutine (the
// listener's loop); the release functions it returns may run anywhere.
type Acceptor struct {
	ln  net.Listener
	cfg Config
	log *slog.Logger

	lines Limiter // bounds the refusal lines

	mu      sync.Mutex
	pending map[uint64]net.Conn // by accept number: the smallest is the oldest
	next    uint64
	max     int // MaxPending, raised by Raise
}

// New returns an Acceptor for ln.
func New(ln net.Listener, cfg Config) *Acceptor {
	if cfg.MaxPending <= 0 {
		cfg.MaxPending = 256
	}
	if cfg.LogEvery <= 0 {
		cfg.LogEvery = time.Second
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Acceptor{ln: ln, cfg: cfg, log: log, lines: Limiter{Every: cfg.LogEvery}, pending: map[uint64]net.Conn{}, max: cfg.MaxPending}
}

// Raise lifts the bound on pending connections to n if it is lower: a
// listener opened before its world's size is known (the control lane)
// takes more once it is, as every PE may dial it at once.
func (a *Acceptor) Raise(n int) {
	a.mu.Lock()
	a.max = max(a.max, n)
	a.mu.Unlock()
}

// Accept returns the next connection and the function that admits it: call
// admitted once the peer has authenticated (or when the connection ends,
// whichever comes first; calls after the first do nothing), which frees its
// pending place. Accept returns an error only when the listener was closed
// (errors.Is(err, net.ErrClosed)); other accept errors are retried after a
// backoff.
func (a *Acceptor) Accept() (c net.Conn, admitted func(), err error) {
	backoff := time.Duration(0)
	for {
		c, err := a.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil, nil, err
			}
			backoff = min(max(2*backoff, minBackoff), maxBackoff)
			a.refuse("accept failed; retrying", "err", err, "retry_in", backoff)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		if a.cfg.TellEvicted {
			c = &tellConn{Conn: c}
		}
		id, evicted := a.track(c)
		if evicted != nil {
			// Closing ends the evicted handshake with an error; its
			// owner's admitted call then finds it gone.
			if tc, ok := evicted.(*tellConn); ok {
				tc.evict()
			} else {
				evicted.Close()
			}
			a.refuse("too many connections waiting to authenticate; closed the oldest", "remote", evicted.RemoteAddr().String(), "max_pending", a.maxPending())
		}
		return c, func() { a.untrack(id) }, nil
	}
}

// track registers c as pending and returns the oldest pending connection
// if that makes one too many.
func (a *Acceptor) track(c net.Conn) (uint64, net.Conn) {
	a.mu.Lock()
	defer a.mu.Unlock()
	id := a.next
	a.next++
	a.pending[id] = c
	if len(a.pending) <= a.max {
		return id, nil
	}
	oldest := id
	for k := range a.pending {
		oldest = min(oldest, k)
	}
	ev := a.pending[oldest]
	delete(a.pending, oldest)
	return id, ev
}

func (a *Acceptor) maxPending() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.max
}

func (a *Acceptor) untrack(id uint64) {
	a.mu.Lock()
	delete(a.pending, id)
	a.mu.Unlock()
}

// Pending reports how many accepted connections await admission.
func (a *Acceptor) Pending() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.pending)
}

// Refused logs a refusal of a connection by its owner (a failed handshake),
// rate-limited like the Acceptor's own.
func (a *Acceptor) Refused(msg string, args ...any) { a.refuse(msg, args...) }

func (a *Acceptor) refuse(msg string, args ...any) {
	n, ok := a.lines.Allow(time.Now())
	if !ok {
		return
	}
	args = append(args, "listener", a.cfg.Name)
	if n > 0 {
		args = append(args, "also_refused_since_last_line", n)
	}
	a.log.Warn(a.cfg.Name+": "+msg, args...)
}
