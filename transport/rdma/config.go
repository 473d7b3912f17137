package rdma

import (
	"crypto/tls"
	"log/slog"
	"net"
	"time"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
)

// Config describes one node: the PE that owns it, its heap and how it talks.
// Zero values of the tuning fields take the defaults named on each field.
type Config struct {
	// Rank is this PE's number in the world; frames addressed to another
	// rank are relayed. Required, 0 <= Rank < NPEs.
	Rank int
	// NPEs is the number of PEs in the world; frames naming a rank outside
	// [0, NPEs) are hostile. Required, > 0.
	NPEs int
	// Heap is the local symmetric heap: remote puts and atomics land here
	// and remote gets read from here. Required (may be empty).
	Heap []byte
	// Usable, if set, returns how many bytes of Heap peers may address
	// now: a heap that grows (heap.NewGrowable) passes its whole
	// reservation as Heap and its current size here, read once per frame.
	// Default: len(Heap).
	Usable func() int64
	// Statics is the local statics region (transport.StaticsBase): the
	// requests whose offsets lie from StaticsBase land here, checked
	// against its length like those to Heap. Default: none, and such
	// requests are refused like any outside Heap.
	Statics []byte
	// Bell is rung after every remote write, atomic or signal lands in Heap,
	// so that local waiters notice. Default: none (nobody waits).
	Bell transport.Bell

	// ServerTLS wraps accepted connections and ClientTLS dialled ones; they
	// differ because the server presents a certificate and the client checks
	// it. Both nil = plain TCP (tests, trusted networks); exactly one nil is
	// refused, since a half-encrypted world would silently talk past itself.
	ServerTLS, ClientTLS *tls.Config
	// Authenticate runs on every connection after TLS and before any frame
	// is read (server is true on the accepting side). A non-nil error closes
	// the connection. Default nil: no authentication (tests only; production
	// passes the job-secret handshake). On the accepting side the
	// connection, or one under it (tls.Conn's NetConn), has a method
	// Verified(), which Authenticate should call once the client has
	// proven itself and before this side's last word
	// (secure.VerifiedHook finds it): until then the listener counts the
	// connection among those a flood of strangers may push out; without
	// the call it counts it until Authenticate returns.
	Authenticate func(c net.Conn, server bool) error

	// ListenAddr is the address to accept on. Default "127.0.0.1:0".
	ListenAddr string
	// Listener, if set, is accepted on instead of ListenAddr, and closed
	// with the node: a caller that must publish the address before it
	// knows its rank listens first.
	Listener net.Listener

	// SmallMax is the largest payload that travels on the small lane (with
	// atomics, signals and flushes); larger ones use the bulk lane so that a
	// megabyte transfer never delays an 8-byte atomic. Default 8 KiB: above
	// that the copy into one write buffer costs more than a second syscall.
	SmallMax int
	// ChunkSize splits bulk transfers into frames of at most this many bytes,
	// so a huge put does not monopolise a lane and a relay needs only one
	// chunk of buffer. Default 256 KiB; at most MaxChunk.
	ChunkSize int
	// MaxInflight bounds the bytes of get responses one blocking Get waits
	// for at once (its pipelining window). Default 4 MiB: enough to keep
	// loopback and a 10 GbE link busy.
	MaxInflight int
	// MaxOutstanding bounds the requests awaiting a response on one lane;
	// further requests wait for a free slot (back-pressure). Default 1024.
	MaxOutstanding int
	// OpTimeout bounds every blocking wait (connect, a response, a write to a
	// stalled socket). An expired wait fails the peer: an unresponsive peer
	// may have lost our puts. Default 30 s.
	OpTimeout time.Duration
	// HandshakeTimeout bounds an accepted connection's TLS and job-secret
	// handshake, while its peer has proved nothing: a stranger that
	// connects and stalls holds its place among the connections in their
	// handshake (admit's bound) no longer. Default 10 s, the control
	// plane's bound (lane.Config.HandshakeTimeout), or OpTimeout if
	// shorter; a peer whose handshake it cut dials again.
	HandshakeTimeout time.Duration
	// BusyPoll is the longest a read polls its socket before it parks in
	// the runtime's poller (see busyConn; the node adapts it, down to 0,
	// while polls go unanswered): a response that comes within it costs no
	// thread wake-up, which on a virtual machine is most of a loopback
	// round trip. Default 0: reads park at once, which suits many nodes in
	// one process (tests, simulations) and cores shared with other work.
	BusyPoll time.Duration
	// LockedCallers says that the goroutines calling the node's paths are
	// locked to their OS threads, as C threads calling in through cgo
	// are. A busy poll inside such a call then yields to the process's
	// other goroutines only after lockedYieldAfter: there each
	// runtime.Gosched hands the P to another thread and back, two context
	// switches, and yielding every few reads made an 8-byte get over TCP
	// from C 30% slower than from Go. Default false.
	LockedCallers bool
	// OnContended, if set, runs when a busy poll starts resting because
	// the node's cores are oversubscribed (its yields return late: see
	// pollBudget), on the polling goroutine; it must not block. The
	// multi-process backend unbinds a PE the launcher bound to one CPU
	// there (affinity.Widen). Default nil.
	OnContended func()
	// Logger receives connection events and the reason for every closed
	// connection. Default slog.Default().
	Logger *slog.Logger
}

// MaxChunk is the largest ChunkSize and so the largest frame payload the
// decoder accepts from anyone.
const MaxChunk = 16 << 20

func (c *Config) validate() error { _, err := c.withDefaults(); return err }

func (c *Config) withDefaults() (Config, error) {
	cfg := *c
	bad := func(format string, args ...any) (Config, error) {
		return cfg, errs.New("rdma.Listen", c.Rank, errs.NoPE, errs.ErrInvalidArgument, format, args...)
	}
	if cfg.NPEs <= 0 || cfg.Rank < 0 || cfg.Rank >= cfg.NPEs {
		return bad("rank %d of %d PEs", cfg.Rank, cfg.NPEs)
	}
	if (cfg.ServerTLS == nil) != (cfg.ClientTLS == nil) {
		return bad("ServerTLS and ClientTLS must both be set or both be nil")
	}
	if cfg.ListenAddr == "" {
		cfg.ListenAddr = "127.0.0.1:0"
	}
	if cfg.SmallMax == 0 {
		cfg.SmallMax = 8 << 10
	}
	if cfg.ChunkSize == 0 {
		cfg.ChunkSize = 256 << 10
	}
	if cfg.MaxInflight == 0 {
		cfg.MaxInflight = 4 << 20
	}
	if cfg.MaxOutstanding == 0 {
		cfg.MaxOutstanding = 1024
	}
	if cfg.OpTimeout == 0 {
		cfg.OpTimeout = 30 * time.Second
	}
	if cfg.HandshakeTimeout == 0 {
		cfg.HandshakeTimeout = min(10*time.Second, cfg.OpTimeout)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	switch {
	case cfg.ChunkSize < 1 || cfg.ChunkSize > MaxChunk:
		return bad("ChunkSize %d outside [1, %d]", cfg.ChunkSize, MaxChunk)
	case cfg.SmallMax < 1 || cfg.SmallMax > cfg.ChunkSize:
		return bad("SmallMax %d outside [1, ChunkSize]", cfg.SmallMax)
	case cfg.MaxInflight < cfg.ChunkSize:
		return bad("MaxInflight %d below ChunkSize %d", cfg.MaxInflight, cfg.ChunkSize)
	case cfg.MaxOutstanding < 1 || cfg.MaxOutstanding > 1<<16:
		return bad("MaxOutstanding %d outside [1, 65536]", cfg.MaxOutstanding)
	case cfg.BusyPoll < 0 || cfg.BusyPoll > time.Second:
		return bad("BusyPoll %v outside [0, 1s]", cfg.BusyPoll)
	case cfg.OpTimeout < 0:
		return bad("OpTimeout %v negative", cfg.OpTimeout)
	case cfg.HandshakeTimeout < 0:
		return bad("HandshakeTimeout %v negative", cfg.HandshakeTimeout)
	}
	return cfg, nil
}
