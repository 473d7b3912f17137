package world

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/eventstream"
	"github.com/asynkron/protoactor-go/remote"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"

	"github.com/goshmem/shmem/actors"
	"github.com/goshmem/shmem/internal/core"
	"github.com/goshmem/shmem/membership"
)

const coordinatorName = "coordinator"

// lingerOnExit bounds how long rank 0, which hosts the coordinator, waits at
// Finalize for the other PEs to disconnect: its last replies must reach them
// before its server stops.
const lingerOnExit = 5 * time.Second

// shutdownSettle is how long rank 0 stays up after every peer has started
// to leave (see close). A peer's remote Shutdown takes milliseconds.
const shutdownSettle = 250 * time.Millisecond

// control is this process's share of the control plane: an actor system
// reachable through protoactor's remote layer (gRPC, over the job's TLS),
// the coordinator on rank 0, and the failure watcher that turns lost
// connections into PEFailed notices and floods them (flood.go).
type control struct {
	rank  int
	log   *slog.Logger
	sys   *actor.ActorSystem
	rem   *remote.Remote
	coord *actor.PID
	sub   *eventstream.Subscription
	conns *controlConns

	// send delivers a control message; the remote layer's Send, replaced
	// in tests. Callers go through post, never send directly.
	send func(pid *actor.PID, msg any)
	// sendMu orders posts against close: protoactor's remote layer panics
	// when a message meets its endpoint supervisor mid-shutdown (a nil
	// endpoint, upstream), so close waits for posts under way and later
	// posts are dropped. A failure notice from a timer (lost) can fire
	// during Finalize at any moment.
	sendMu  sync.RWMutex
	closing bool

	mu      sync.Mutex
	byAddr  map[string]int
	gone    map[int]bool
	allGone chan struct{}
	// goneChanged is closed and replaced whenever a PE is marked gone.
	goneChanged chan struct{}
	p           *core.PE
	node        interface{ PeerFailed(peer int) } // the data-path nodes (peerFailers)
	peerPIDs    []*actor.PID
	// reach[a][b] says PE a could connect to PE b at start-up; a pair
	// that cannot is relayed on the data path, and gets no control
	// messages from each other.
	reach [][]bool
}

func startControl(host string, log *slog.Logger, secret []byte, serverTLS, clientTLS *tls.Config) (c *control, err error) {
	c = &control{log: log, sys: actors.NewSystem(log), gone: map[int]bool{}, allGone: make(chan struct{}), goneChanged: make(chan struct{}), conns: newControlConns()}
	c.send = func(pid *actor.PID, msg any) { c.sys.Root.Send(pid, msg) }
	serverCreds, dialCreds := insecure.NewCredentials(), insecure.NewCredentials()
	if serverTLS != nil {
		serverCreds, dialCreds = credentials.NewTLS(serverTLS), credentials.NewTLS(clientTLS)
	}
	token := controlToken(secret)
	if strings.Contains(host, ":") && !strings.HasPrefix(host, "[") {
		host = "[" + host + "]"
	}
	cfg := remote.Configure(host, 0,
		remote.WithServerOptions(grpc.Creds(serverCreds), grpc.MaxRecvMsgSize(8<<20),
			grpc.StreamInterceptor(authStream(token)), grpc.UnaryInterceptor(authUnary(token)),
			grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: time.Second, PermitWithoutStream: true}),
			// The server side of a connection from a host that vanished
			// would otherwise stay until Finalize, whose graceful stop
			// then waits 10 s for it to drain. Known upstream risk: a
			// connection closed this way at an unlucky moment can meet
			// protoactor's endpointManager.stop sending on a channel its
			// reader just closed (a panic); never seen in our runs.
			grpc.KeepaliveParams(keepalive.ServerParameters{Time: 2 * time.Second, Timeout: 2 * time.Second})),
		// Every connection goes through c.conns, which closes what
		// protoactor leaves open (see controlConns). Keepalive notices a
		// host that vanished without a reset; it is off in gRPC by default
		// (NOTES.md). gRPC raises a client interval below 10 s to 10 s, so
		// alone it noticed after 10 s + 2 s on the client side; the
		// kernel's probes (controlKeepAlive) end such a connection in about
		// 4 s. The server side's end does not reach protoactor as a lost
		// endpoint, so each side relies on its own client connection.
		remote.WithDialOptions(append(c.conns.dialOptions(), grpc.WithTransportCredentials(dialCreds),
			grpc.WithPerRPCCredentials(tokenCreds{token: token, secure: serverTLS != nil}),
			grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: 2 * time.Second, Timeout: 2 * time.Second, PermitWithoutStream: true}),
			grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(8<<20)))...),
		// Control messages are small and few: a million-slot queue would
		// preallocate 31 MiB per peer, and 1000-message batches of large
		// messages exceed gRPC's limits (NOTES.md).
		remote.WithEndpointWriterQueueSize(4096),
		remote.WithEndpointWriterBatchSize(64),
		remote.WithEndpointManagerQueueSize(4096),
	)
	// One connection attempt per endpoint writer: its retries leak their
	// ClientConns, and gRPC retries within the attempt (controlConns).
	cfg.MaxRetryCount = 1
	c.rem = remote.NewRemote(c.sys, cfg)
	defer func() {
		if v := recover(); v != nil {
			c.conns.close()
			c.sys.Shutdown()
			err = fmt.Errorf("starting the remote layer on %s: %v", host, v)
		}
	}()
	c.rem.Start()
	// Every process runs a coordinator, though only rank 0's is used: ranks
	// may be assigned after start-up (gossip), and a PE must never send to
	// a coordinator that does not exist yet.
	if c.coord, err = c.sys.Root.SpawnNamed(actors.NewCoordinator(log), coordinatorName); err != nil {
		c.rem.Shutdown(false)
		c.conns.close()
		c.sys.Shutdown()
		return nil, err
	}
	return c, nil
}

// setWorld gives the control plane the world it serves: this PE's rank,
// every PE's record, who can connect to whom (reach, as agreed at
// start-up) and the data-path nodes. It comes before core.Start, whose PE may
// receive a failure notice (onFailure) as soon as its actor runs.
func (c *control) setWorld(rank int, recs []record, reach [][]bool, node peerFailers) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.node, c.rank, c.reach = node, rank, reach
	c.byAddr = make(map[string]int, len(recs))
	c.peerPIDs = make([]*actor.PID, len(recs))
	for r, rec := range recs {
		c.byAddr[rec.Actor] = r
		c.peerPIDs[r] = actor.NewPID(rec.Actor, core.PEActor(r))
	}
	if len(recs) == 1 {
		close(c.allGone)
	}
}

// watch starts turning lost connections to PEs into failure notices.
func (c *control) watch(p *core.PE) {
	c.mu.Lock()
	c.p = p
	c.mu.Unlock()
	c.sub = c.sys.EventStream.Subscribe(func(evt any) {
		if e, ok := evt.(*remote.EndpointTerminatedEvent); ok {
			c.lost(e.Address, false)
		}
	})
}

// lost handles the end of the connection to the PE at addr. During
// Finalize that is the PE leaving; before it, the PE failed, and every PE
// and the coordinator are told so that no wait for it lasts.
func (c *control) lost(addr string, confirmed bool) {
	c.mu.Lock()
	rank, ok := c.byAddr[addr]
	// A peer this PE cannot connect to (its traffic is relayed) gets no
	// messages from here: the failed connection attempts to it are not
	// its failure.
	if !ok || c.gone[rank] || rank == c.rank || !confirmed && !c.reach[c.rank][rank] {
		c.mu.Unlock()
		return
	}
	c.gone[rank] = true
	close(c.goneChanged)
	c.goneChanged = make(chan struct{})
	if len(c.gone) == len(c.byAddr)-1 {
		close(c.allGone)
	}
	c.mu.Unlock()
	// A PE that calls GlobalExit drops its connections right after sending
	// the notice, which may arrive a moment after the drop: declaring the
	// failure a little later lets the exit win, as it should.
	time.AfterFunc(failureGrace, func() { c.declare(rank, addr) })
}

// failureGrace is how long a lost connection waits before it counts as a
// failed PE (see lost). Short next to the seconds failure detection takes.
const failureGrace = 200 * time.Millisecond

// declare records that this PE detected rank's failure; recording it runs
// onFailure, which tells the world, unless a notice got here first.
func (c *control) declare(rank int, addr string) {
	c.mu.Lock()
	p := c.p
	c.mu.Unlock()
	if p.Check("watch") != nil {
		return // finalizing: the peer left
	}
	reason := fmt.Sprintf("lost the connection to PE %d at %s", rank, addr)
	c.log.Warn("PE failed", "failed", rank, "reason", reason)
	p.NotifyFailed(rank, reason)
}

// onFailure is the PE's OnFailure hook: this PE has just recorded that
// rank failed, detected by origin (this PE, or the sender of a notice).
// It fails the data paths to rank and through it, so that operations
// pending on them end now instead of at the transport's timeout, and
// floods the notice (see floodTargets): a detector tells every PE it
// connects to and the coordinator, a PE that heard forwards to the PEs the
// detector cannot connect to.
func (c *control) onFailure(rank int, reason string, origin int) {
	c.mu.Lock()
	node := c.node
	c.mu.Unlock()
	// No check for Finalize here: the detector's own waiters may wake on
	// this failure and finalize before the flood below is posted, and the
	// others must still hear of it (post drops what comes too late).
	if node != nil {
		node.PeerFailed(rank)
	}
	tell := c.noticeTargets(rank, origin)
	if len(tell) == 0 {
		return
	}
	env, err := actors.Wrap(&actors.PEFailed{Rank: rank, Reason: reason, Origin: origin})
	if err != nil {
		return
	}
	if origin != c.rank {
		c.log.Info("forwarding a failure notice", "failed", rank, "detected_by", origin, "to", len(tell))
	}
	for _, pid := range tell {
		c.post(pid, env)
	}
}

// post sends msg to pid unless the control plane has begun to close, and
// reports whether it did.
func (c *control) post(pid *actor.PID, msg any) bool {
	c.sendMu.RLock()
	defer c.sendMu.RUnlock()
	if c.closing {
		return false
	}
	c.send(pid, msg)
	return true
}

// noticeTargets returns who this PE tells that rank failed: the peers
// floodTargets names, skipping those whose connection already ended (a
// message to a PE that left would open a new connection to it, which then
// lingers past Finalize), and, when this PE detected the failure, rank 0's
// coordinator, which aborts the agreements rank was part of.
func (c *control) noticeTargets(rank, origin int) []*actor.PID {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reach == nil {
		return nil // not yet part of a world: nobody to tell
	}
	var tell []*actor.PID
	if origin == c.rank && rank != 0 && !c.gone[0] {
		tell = append(tell, actor.NewPID(c.peerPIDs[0].Address, coordinatorName))
	}
	for _, q := range floodTargets(c.reach, c.rank, origin, rank, func(q int) bool { return c.gone[q] }) {
		tell = append(tell, c.peerPIDs[q])
	}
	return tell
}

// awaitGone waits until every other PE but except (-1: none) has
// disconnected, or d has passed. A process that ends on a GlobalExit waits
// here first (see joiner.onGlobalExit).
func (c *control) awaitGone(except int, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		c.mu.Lock()
		gone := len(c.gone)
		if except >= 0 && except != c.rank && !c.gone[except] {
			gone++
		}
		done := gone >= len(c.byAddr)-1
		changed := c.goneChanged
		c.mu.Unlock()
		if done {
			return
		}
		select {
		case <-changed:
		case <-t.C:
			return
		}
	}
}

func (c *control) close() error {
	if c.sub != nil && c.rank == 0 {
		select {
		case <-c.allGone:
			// protoactor's remote Shutdown crashes (a nil map, upstream)
			// if an endpoint terminates while it runs. Rank 0 sees a
			// peer as gone when the peer starts its own Shutdown; staying
			// up a moment longer lets that Shutdown finish before rank
			// 0's connection to it can drop.
			time.Sleep(shutdownSettle)
		case <-time.After(lingerOnExit):
		}
	}
	if c.sub != nil {
		c.sys.EventStream.Unsubscribe(c.sub)
	}
	if c.coord != nil {
		_ = c.sys.Root.StopFuture(c.coord).Wait()
	}
	// Only now: rank 0 lingers above so that its last notices reach the
	// others, and a detector's flood may still be posting.
	c.sendMu.Lock()
	c.closing = true
	c.sendMu.Unlock()
	// Writers still connecting would hold remote.Shutdown up to its 10 s
	// limit and outlive it: fail their attempts first. Then close what
	// protoactor leaves open (see controlConns).
	c.conns.abort()
	c.rem.Shutdown(true)
	c.conns.close()
	c.sys.Shutdown()
	return nil
}

// watchGossip turns membership's failure reports into lost connections.
// It ends when the membership world closes its channel.
func (c *control) watchGossip(w *membership.World, recs []record) {
	for rank := range w.Failures() {
		if rank >= 0 && rank < len(recs) {
			c.lost(recs[rank].Actor, true)
		}
	}
}
