// Package admit accepts connections for goshmem's listeners (data lanes,
// control lanes, the rendezvous) the way a server facing strangers must: an
// accept error other than a closed listener is retried with backoff instead
// of ending the listener (one EMFILE must not stop a PE serving for good), at
// most MaxPending connections may be waiting to authenticate at once (more
// are closed at once, before a byte is read), and refusals are logged at
// most once per LogEvery so a flood cannot flood the log too.
package admit

import (
	"errors"
	"log/slog"
	"net"
	"sync"
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
	return &Acceptor{ln: ln, cfg: cfg, log: log, lines: Limiter{Every: cfg.LogEvery}, pending: map[uint64]net.Conn{}}
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
		id, evicted := a.track(c)
		if evicted != nil {
			// Closing ends the evicted handshake with an error; its
			// owner's admitted call then finds it gone.
			evicted.Close()
			a.refuse("too many connections waiting to authenticate; closed the oldest", "remote", evicted.RemoteAddr().String(), "max_pending", a.cfg.MaxPending)
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
	if len(a.pending) <= a.cfg.MaxPending {
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
