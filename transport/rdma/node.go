// Package rdma is goshmem's between-hosts data path: it carries one PE's
// puts, gets, atomics and signals to the symmetric heaps of PEs in other
// processes as framed binary messages, and applies the frames it receives to
// its own heap. This first provider runs over TCP (optionally TLS) in pure
// Go; the frame format and the completion rules are what a verbs or
// libfabric provider would keep.
//
// A Node owns a listening socket, the local heap and one Path per peer.
// Each path dials two connections ("lanes") on first use: a small lane for
// payloads up to Config.SmallMax, atomics, signals and flushes, and a bulk
// lane for larger transfers, sent in Config.ChunkSize frames. The accepting
// side reads put payloads straight from the socket into the heap after
// checking the range, and applies atomics with the hardware atomics of
// package transport, so remote and local atomics never lose an update.
//
// Completion: a lane's frames are numbered in the order written and the
// peer applies them in that order. On a small lane the peer acknowledges
// puts, posted atomics and signals unasked (opAck, once its input runs
// dry), so Quiet after a put waits for an ack already on its way instead of
// sending a flush: one round trip, one write each way. Bulk and relayed
// lanes are completed by a flush frame and its answer (on a relayed lane
// only the final target's answer proves the data landed).
//
// A frame addressed to another rank is relayed: the node forwards it over
// its own path to that rank and sends the answer back, which lets a PE reach
// a peer it cannot dial (RelayPath).
//
// Failure: a lost connection, an expired OpTimeout or PeerFailed makes every
// pending and later operation towards that peer return errs.ErrPEFailed (or
// errs.ErrTimeout) naming it. A malformed frame closes its connection and
// touches no memory.
package rdma

import (
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"

	"github.com/goshmem/shmem/internal/admit"
	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
)

// Node is one PE's endpoint: it serves its heap to peers and holds its paths
// to them. Create it with Listen; Close (or Engine().Close) releases it.
type Node struct {
	cfg Config
	log *slog.Logger
	ln  net.Listener
	acc *admit.Acceptor // ln's accept loop: retries EMFILE, bounds unauthenticated connections
	eng engine
	wg  sync.WaitGroup

	mu      sync.Mutex
	closed  bool
	paths   map[int]*path
	failed  map[int]bool
	servers map[*serverConn]struct{}
	streams map[*stream]struct{}    // open streams (contexts), failed and closed with the node
	all     atomic.Pointer[[]*path] // copy-on-write list of paths for Fence and Quiet
	poll    *pollBudget             // busy polling of the node's reads; nil when BusyPoll is 0
	// ranger is cfg.Bell when it can ring for a range (serverConn.ring);
	// yieldAfterRing: servers yield to the waiter they woke (a LocalBell,
	// whose waiters park on a channel, with polling reads).
	ranger         rangeRinger
	yieldAfterRing bool
	clock          clock       // deadlines' monotonic clock; set by Listen, never changed
	leaving        atomic.Bool // see Leaving

	bufs    sync.Pool // *[]byte of ChunkSize, for relayed payloads
	flushes sync.Pool // *[]pendingFlush, for Quiet

	// connects counts lanes connected (dial and handshake done), redials
	// the dials of a lane whose earlier dial or handshake failed: an
	// operator's sign of peers that were late or unreachable (ConnStats).
	connects, redials atomic.Uint64
}

// Listen validates cfg, listens on cfg.ListenAddr and starts serving the
// heap. Errors wrap errs.ErrInvalidArgument or errs.ErrBootstrap.
func Listen(cfg Config) (*Node, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	ln := c.Listener
	if ln == nil {
		if ln, err = net.Listen("tcp", c.ListenAddr); err != nil {
			return nil, errs.New("rdma.Listen", c.Rank, errs.NoPE, errs.ErrBootstrap, "listen on %s: %v", c.ListenAddr, err)
		}
	}
	n := &Node{cfg: c, log: c.Logger, ln: ln,
		paths: map[int]*path{}, failed: map[int]bool{}, servers: map[*serverConn]struct{}{}, streams: map[*stream]struct{}{},
		clock: newClock()}
	n.eng.n = n
	n.acc = admit.New(ln, admit.Config{Name: "rdma", Logger: c.Logger, TellEvicted: true})
	n.ranger, _ = c.Bell.(rangeRinger)
	if c.BusyPoll > 0 {
		n.poll = newPollBudget(c.BusyPoll)
		n.poll.onRest = c.OnContended
		_, n.yieldAfterRing = c.Bell.(*transport.LocalBell)
		if c.LockedCallers {
			n.poll.servers = newReadyWatch()
		}
	}
	chunk := c.ChunkSize
	n.bufs.New = func() any { b := make([]byte, chunk); return &b }
	n.flushes.New = func() any { b := make([]pendingFlush, 0, 16); return &b }
	n.wg.Add(1)
	go n.acceptLoop()
	return n, nil
}

// Addr is the address peers dial to reach this node.
func (n *Node) Addr() string { return n.ln.Addr().String() }

// Engine returns the engine that fences and quiets every path of the node.
func (n *Node) Engine() transport.Engine { return &n.eng }

// Path returns the path to peer, which listens at addr. It connects on first
// use; connection errors come back from the operations. Asking again for the
// same peer returns the first path.
func (n *Node) Path(peer int, addr string) transport.Path {
	return n.newPath(peer, -1, addr)
}

// RelayPath returns a path to peer whose frames go to via (at viaAddr),
// which forwards them over its own path to peer; via must have a path to
// peer. A failure of either PE fails the path.
func (n *Node) RelayPath(peer, via int, viaAddr string) transport.Path {
	return n.newPath(peer, via, viaAddr)
}

func (n *Node) newPath(peer, via int, addr string) *path {
	n.mu.Lock()
	defer n.mu.Unlock()
	if p, ok := n.paths[peer]; ok {
		return p
	}
	p := n.makePath(&n.eng, peer, via, addr)
	valid := peer >= 0 && peer < n.cfg.NPEs && via < n.cfg.NPEs && via != peer
	switch {
	case !valid:
		p.failAll(errs.ErrInvalidArgument, "no PE %d (via %d) in a world of %d", peer, via, n.cfg.NPEs)
		return p // not registered: the caller's mistake should not stay in the table
	case n.closed:
		p.failAll(errs.ErrFinalized, "node closed")
	case n.failed[peer] || (via >= 0 && n.failed[via]):
		p.failAll(errs.ErrPEFailed, "PE %d was marked failed", peer)
	}
	n.paths[peer] = p
	list := make([]*path, 0, len(n.paths))
	if old := n.all.Load(); old != nil {
		list = append(list, *old...)
	}
	list = append(list, p)
	n.all.Store(&list)
	return p
}

func (p *path) failAll(sentinel error, detail string, args ...any) {
	for _, l := range p.lanes {
		l.fail(sentinel, detail, args...)
	}
}

// PeerFailed marks peer dead: every operation waiting on it, or on a relay
// through it, returns errs.ErrPEFailed naming it, and so do later ones.
func (n *Node) PeerFailed(peer int) {
	n.mu.Lock()
	n.failed[peer] = true
	var hit []*path
	for _, p := range n.paths {
		if p.peer == peer || p.via == peer {
			hit = append(hit, p)
		}
	}
	for s := range n.streams {
		hit = append(hit, s.pathsTo(peer)...)
	}
	n.mu.Unlock()
	for _, p := range hit {
		p.failAll(errs.ErrPEFailed, "PE %d marked failed", peer)
	}
}

// route returns the path this node uses to reach rank, or nil.
func (n *Node) route(rank int) *path {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.paths[rank]
}

// Leaving tells the node that its PE is finalizing with its operations
// complete: a connection that ends from now on is a peer that finalized
// first tearing down, logged at debug level instead of as a failure.
func (n *Node) Leaving() { n.leaving.Store(true) }

// Close stops serving, fails every pending operation with errs.ErrFinalized,
// closes every socket and waits for every goroutine the node started.
func (n *Node) Close() error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil
	}
	n.closed = true
	paths := make([]*path, 0, len(n.paths))
	for _, p := range n.paths {
		paths = append(paths, p)
	}
	for s := range n.streams {
		paths = append(paths, s.pathsTo(-1)...)
	}
	servers := make([]*serverConn, 0, len(n.servers))
	for s := range n.servers {
		servers = append(servers, s)
	}
	n.mu.Unlock()
	err := n.ln.Close()
	for _, p := range paths {
		p.failAll(errs.ErrFinalized, "node closed")
	}
	for _, s := range servers {
		s.raw.Close()
	}
	n.wg.Wait()
	if n.poll != nil {
		n.poll.servers.close()
	}
	if err != nil && !errors.Is(err, net.ErrClosed) {
		return errs.New("rdma.Close", n.cfg.Rank, errs.NoPE, errs.ErrFinalized, "closing listener: %v", err)
	}
	return nil
}

func (n *Node) acceptLoop() {
	defer n.wg.Done()
	for {
		// Only a closed listener ends the loop: admit retries the rest.
		raw, admitted, err := n.acc.Accept()
		if err != nil {
			return
		}
		sc := &serverConn{n: n, raw: raw, admitted: admitted, relayFail: -1}
		n.mu.Lock()
		if n.closed {
			n.mu.Unlock()
			raw.Close()
			return
		}
		n.servers[sc] = struct{}{}
		n.wg.Add(1)
		n.mu.Unlock()
		go sc.serve()
	}
}

func (n *Node) dropServer(sc *serverConn) {
	n.mu.Lock()
	delete(n.servers, sc)
	n.mu.Unlock()
}

// getBuf returns a buffer of n bytes for a relayed payload.
func (n *Node) getBuf(size int) *[]byte {
	if size <= n.cfg.ChunkSize {
		b := n.bufs.Get().(*[]byte)
		*b = (*b)[:size]
		return b
	}
	b := make([]byte, size)
	return &b
}

func (n *Node) putBuf(b *[]byte) {
	if cap(*b) == n.cfg.ChunkSize {
		*b = (*b)[:cap(*b)]
		n.bufs.Put(b)
	}
}
