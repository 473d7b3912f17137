package lane

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/goshmem/shmem/internal/admit"
	"github.com/goshmem/shmem/internal/errs"
)

// Config describes a Lane. Listener, Secret and System are required.
type Config struct {
	// Listener is where peers dial this PE; the Lane owns it from New on
	// and closes it at Close. It is opened by the caller before the
	// exchange, so that its address can travel in this PE's record.
	Listener net.Listener
	// ServerTLS and ClientTLS secure every connection; nil for both turns
	// TLS off (the job-secret handshake still runs).
	ServerTLS, ClientTLS *tls.Config
	// Secret is the job secret every connection proves (secure.Handshake).
	Secret []byte
	// System is the actor system messages are delivered to. New registers
	// a resolver on it for the addresses Address names.
	System *actor.ActorSystem
	// Logger receives the lane's log; nil discards.
	Logger *slog.Logger
	// Timing tunes failure detection; zero fields take DefaultTiming's.
	Timing Timing
	// HandshakeTimeout bounds a connection's TLS and job-secret handshake
	// and its hello. Default 10 s.
	HandshakeTimeout time.Duration
	// MaxUnauthenticated bounds the accepted connections still in their
	// handshake; a newer one closes the oldest (internal/admit), which is
	// told admit.Busy if this side had not answered it yet. Default 256,
	// raised at Join to 4 per PE of the world and 64 more, since every PE
	// may dial rank 0 at once.
	MaxUnauthenticated int
	// OnLost runs when this PE detects that a peer failed: its link ended
	// without a bye, stayed silent for Timing.Silence, or never came up.
	// reason names the peer, its address and the cause; linked says the
	// link had been up and its connection ended (end of stream, reset), so
	// every message it carried was delivered before this call. It runs on
	// the peer's transport actor and must not block. Optional.
	OnLost func(peer int, reason string, linked bool)
	// OnLeft runs when a peer's link ends with its bye: the peer left on
	// purpose (Close) and answers nothing from now on. It runs on the
	// peer's transport actor after every message the link carried was
	// handed to its target actor, so a message OnLeft sends to one of
	// those actors arrives behind them. It must not block. Optional.
	OnLeft func(peer int)
}

// DefaultTiming detects a silent peer in 3 to 3.5 s: the README's "about
// 3 s" for a killed PE, a cut link or a partition.
// A silent link is confirmed with the other PEs within Probe (1 s) more.
func DefaultTiming() Timing {
	return Timing{Heartbeat: 500, Silence: 3000, Connect: 10000, Retry: 200, Probe: 1000}
}

// TimingFor returns DefaultTiming with silence as the failure bound (a
// peer silent that long is suspected, and declared failed unless another
// PE hears it within a third of it more), heartbeats six to the bound as by
// default.
// A bound below 600 ms is raised to it: heartbeats every 100 ms are the
// most a world of many PEs should send.
func TimingFor(silence time.Duration) Timing {
	t := DefaultTiming()
	if ms := silence.Milliseconds(); ms > 0 {
		t.Silence = max(ms, 600)
		t.Heartbeat = t.Silence / 6
		t.Probe = t.Silence / 3
	}
	return t
}

// Lane is this process's end of the control lanes to every other PE.
type Lane struct {
	cfg    Config
	log    *slog.Logger
	root   *actor.RootContext
	start  time.Time
	acc    *admit.Acceptor // bounds the connections in their handshake
	life   context.Context // cancelled at Close: ends dials and handshakes
	end    context.CancelFunc
	joined chan struct{} // closed by Join
	wg     sync.WaitGroup
	// autoMax: MaxUnauthenticated was not set, so Join raises it with
	// the world's size.
	autoMax bool

	// Set by Join, read-only after joined is closed.
	me    int
	addrs []string
	peers []*actor.PID // transport actors by rank; nil for me

	mu      sync.Mutex
	closing bool
	nextID  int
	conns   map[int]net.Conn
	routes  []Role
	via     []int // the relay of a RoleRelay route
	gone    []bool
	changed chan struct{} // closed and replaced when gone or done changes
	done    int           // peers closed by this side
}

// New starts serving cfg.Listener. Connections are authenticated at once;
// they are matched to their transport actor once Join has run.
func New(cfg Config) (*Lane, error) {
	if cfg.Listener == nil || cfg.System == nil || len(cfg.Secret) == 0 {
		return nil, errs.New("lane.New", errs.NoPE, errs.NoPE, errs.ErrInvalidArgument, "listener, system and secret are required")
	}
	t, d := &cfg.Timing, DefaultTiming()
	t.Heartbeat, t.Silence, t.Connect, t.Retry = or(t.Heartbeat, d.Heartbeat), or(t.Silence, d.Silence), or(t.Connect, d.Connect), or(t.Retry, d.Retry)
	t.Probe = or(t.Probe, d.Probe)
	if cfg.HandshakeTimeout <= 0 {
		cfg.HandshakeTimeout = 10 * time.Second
	}
	fixed := cfg.MaxUnauthenticated > 0
	if !fixed {
		cfg.MaxUnauthenticated = 256
	}
	l := &Lane{cfg: cfg, log: cfg.Logger, root: cfg.System.Root, start: time.Now(),
		joined: make(chan struct{}), autoMax: !fixed,
		conns: map[int]net.Conn{}, changed: make(chan struct{}), me: -1}
	if l.log == nil {
		l.log = slog.New(slog.DiscardHandler)
	}
	l.acc = admit.New(cfg.Listener, admit.Config{Name: "control lane", MaxPending: cfg.MaxUnauthenticated,
		Logger: l.log, TellEvicted: true})
	l.life, l.end = context.WithCancel(context.Background())
	cfg.System.ProcessRegistry.RegisterAddressResolver(l.resolve)
	l.wg.Add(1)
	go l.acceptLoop()
	return l, nil
}

func or(v, d int64) int64 {
	if v > 0 {
		return v
	}
	return d
}

// Addr returns the listener's address, for this PE's record.
func (l *Lane) Addr() string { return l.cfg.Listener.Addr().String() }

// Join gives the lane its world: this PE's rank and every PE's lane
// address, by rank. It starts a transport actor per peer and the links
// with rank 0 (every PE dials rank 0), which the route agreement needs;
// SetRoutes decides the others. Call it once.
func (l *Lane) Join(me int, addrs []string) error {
	n := len(addrs)
	if l.autoMax {
		l.acc.Raise(4*n + 64)
	}
	l.me, l.addrs = me, addrs
	l.peers = make([]*actor.PID, n)
	l.mu.Lock()
	l.routes, l.via, l.gone = make([]Role, n), make([]int, n), make([]bool, n)
	l.mu.Unlock()
	for r := range addrs {
		if r == me {
			continue
		}
		pid, err := l.root.SpawnNamed(actor.PropsFromProducer(func() actor.Actor {
			return &peer{l: l, rank: r, st: peerState{t: l.cfg.Timing, via: -1}, conns: map[int]net.Conn{}}
		}), "lane-peer-"+strconv.Itoa(r))
		if err != nil {
			l.stopPeers()
			return errs.New("Init", me, r, errs.ErrBootstrap, "starting the transport actor of PE %d: %v", r, err)
		}
		l.peers[r] = pid
	}
	close(l.joined)
	switch {
	case me != 0 && n > 1:
		l.setRoute(0, Route{Role: RoleDial})
	case me == 0:
		for r := 1; r < n; r++ {
			l.setRoute(r, Route{Role: RoleAccept})
		}
	}
	l.wg.Add(1)
	go l.ticker()
	return nil
}

// SetRoutes sets the route to every peer (Routes' plan for this PE);
// links already decided (those with rank 0) stay.
func (l *Lane) SetRoutes(routes []Route) {
	for r, rt := range routes {
		if r != l.me && rt.Role != RoleUnknown {
			l.setRoute(r, rt)
		}
	}
}

func (l *Lane) setRoute(r int, rt Route) {
	l.mu.Lock()
	if l.routes[r] == RoleUnknown {
		l.routes[r], l.via[r] = rt.Role, rt.Via
	}
	l.mu.Unlock()
	l.root.Send(l.peers[r], evRoute{role: rt.Role, via: rt.Via})
}

// PeerFailed tells the lane that the PE learned of rank's failure from
// another PE: its link closes, and no failure is declared for it here.
func (l *Lane) PeerFailed(rank int) {
	select {
	case <-l.joined:
	default:
		return
	}
	if rank >= 0 && rank < len(l.peers) && rank != l.me {
		l.root.Send(l.peers[rank], evFailed{})
	}
}

// ticker drives every transport actor's clock.
func (l *Lane) ticker() {
	defer l.wg.Done()
	t := time.NewTicker(time.Duration(l.cfg.Timing.Heartbeat) * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-l.life.Done():
			return
		case <-t.C:
			for _, p := range l.peers {
				if p != nil {
					l.root.Send(p, evTick{})
				}
			}
		}
	}
}

// now is the transport actors' clock, in milliseconds.
func (l *Lane) now() int64 { return time.Since(l.start).Milliseconds() }

// track registers a connection so that Close closes it; it returns 0,
// having closed c, once Close has ended the lane's life. While Close
// waits for the byes a dial may still complete: its link says bye too.
func (l *Lane) track(c net.Conn) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.life.Err() != nil {
		c.Close()
		return 0
	}
	l.nextID++
	l.conns[l.nextID] = c
	return l.nextID
}

func (l *Lane) untrack(id int) {
	l.mu.Lock()
	delete(l.conns, id)
	l.mu.Unlock()
}

// Close says bye on every link, waits for the peers' ends (at most
// Timing.Silence), then closes every connection, the listener and the
// transport actors, and returns once every goroutine of the lane has
// ended. Messages sent before Close go out before the bye. The peers take
// the bye for a departure, not a failure.
func (l *Lane) Close() error { return l.close(false) }

// Abort is Close for a PE that gives up (its start-up failed): the peers
// take its departure for a failure, so that none waits for it.
func (l *Lane) Abort() error { return l.close(true) }

func (l *Lane) close(abort bool) error {
	l.mu.Lock()
	if l.closing {
		l.mu.Unlock()
		return nil
	}
	l.closing = true
	l.mu.Unlock()
	joined := false
	select {
	case <-l.joined:
		joined = true
	default:
	}
	if joined {
		n := 0
		for _, p := range l.peers {
			if p != nil {
				l.root.Send(p, evClose{abort: abort})
				n++
			}
		}
		// A bit more than the actors' own bound, which their ticks enforce.
		l.await(time.Duration(l.cfg.Timing.Silence+2*l.cfg.Timing.Heartbeat)*time.Millisecond, func() bool { return l.done >= n })
	}
	l.end()
	err := l.cfg.Listener.Close()
	if joined {
		l.stopPeers()
	}
	l.mu.Lock()
	conns := l.conns
	l.conns = map[int]net.Conn{}
	l.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
	l.wg.Wait()
	if err != nil && !isClosed(err) {
		return errs.New("Finalize", l.me, errs.NoPE, errs.ErrFinalized, "closing the control listener: %v", err)
	}
	return nil
}

func (l *Lane) stopPeers() {
	for _, p := range l.peers {
		if p != nil {
			_ = l.root.StopFuture(p).Wait()
		}
	}
}
