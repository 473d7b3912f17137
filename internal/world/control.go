package world

import (
	"crypto/tls"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/goshmem/shmem/actors"
	"github.com/goshmem/shmem/internal/actorsys"
	"github.com/goshmem/shmem/internal/core"
	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/internal/world/internal/lane"
)

const coordinatorName = "coordinator"

// lingerOnExit bounds how long a PE that ends the world with GlobalExit
// (its caller, and rank 0, which passes the notice on) waits for the
// others to leave before its process ends (see joiner.onGlobalExit).
const lingerOnExit = 5 * time.Second

// control is this process's share of the control plane: its actor
// system, its end of the control lane to every PE (package lane: one
// authenticated connection a pair, a transport actor per peer), the
// coordinator (only rank 0's is used), and the failure wiring. A failure
// this PE detects (the lane's OnLost, gossip) becomes a PEFailed notice to
// this PE's own actor, behind whatever arrived before it; a failure the PE
// records (onFailure) fails the data paths and is flooded (flood.go).
type control struct {
	log   *slog.Logger
	sys   *actor.ActorSystem
	lane  *lane.Lane
	coord *actor.PID
	// post sends a flood notice to PE to's actor, or to rank 0's
	// coordinator (to == coordinatorTarget): over the lane, or in tests
	// wherever they route it.
	post func(to int, m *actors.PEFailed)

	mu      sync.Mutex
	rank    int
	npes    int         // the world's size, 0 until join
	flood   *floodState // nil until the routes are agreed
	node    dataNodes
	started bool        // the PE actor runs: detections go to it
	early   []detection // detections before it ran
	// loss keeps every failure this PE detected, for start-up's waits.
	loss lossLog
	// ended finds a same-host PE whose process has ended (abortcause.go);
	// nil until the PE runs.
	ended func() (int, string, bool)
	// finalizing is set once this PE's Finalize has completed its own
	// operations (watchGossip).
	finalizing atomic.Bool
}

type detection struct {
	rank   int
	reason string
}

// startControl starts the actor system, the coordinator and the lane on
// ln, which it owns from then on, also on error.
func startControl(ln net.Listener, log *slog.Logger, secret []byte, serverTLS, clientTLS *tls.Config, failAfter time.Duration) (*control, error) {
	c := &control{log: log, sys: actorsys.NewSystem(log), rank: -1}
	c.post = func(to int, m *actors.PEFailed) {
		if to == coordinatorTarget {
			c.sys.Root.Send(coordinatorPID(), m)
			return
		}
		c.send(to, m)
	}
	var err error
	c.lane, err = lane.New(lane.Config{Listener: ln, ServerTLS: serverTLS, ClientTLS: clientTLS, Secret: secret,
		System: c.sys, Logger: log, OnLost: c.lost, OnLeft: c.left, Timing: lane.TimingFor(failAfter)})
	if err != nil {
		ln.Close()
		c.sys.Shutdown()
		return nil, err
	}
	// Every process runs a coordinator, though only rank 0's is used: ranks
	// may be assigned after start-up (gossip), and a PE must never send to
	// a coordinator that does not exist yet.
	if c.coord, err = c.sys.Root.SpawnNamed(actorsys.NewCoordinator(c.worldSize), coordinatorName); err != nil {
		_ = c.close(true)
		return nil, errs.New("Init", errs.NoPE, errs.NoPE, errs.ErrBootstrap, "spawning the coordinator: %v", err)
	}
	return c, nil
}

// worldSize is the world's size for the coordinator, 0 before join.
func (c *control) worldSize() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.npes
}

// coordinatorPID is rank 0's coordinator, from any PE.
func coordinatorPID() *actor.PID { return lane.PID(0, coordinatorName) }

// join starts the lane's transport actors for the world recs describe,
// with the links to rank 0 that the route agreement travels on.
func (c *control) join(rank int, recs []record) error {
	c.mu.Lock()
	c.rank, c.npes = rank, len(recs)
	c.mu.Unlock()
	addrs := make([]string, len(recs))
	for r, rec := range recs {
		addrs[r] = rec.Control
	}
	return c.lane.Join(rank, addrs)
}

// setRoutes links every pair the agreed reach allows (lane.Routes) and
// readies the failure flood over the same graph.
func (c *control) setRoutes(reach [][]bool) {
	c.mu.Lock()
	c.flood = newFloodState(reach, c.rank)
	c.mu.Unlock()
	c.lane.SetRoutes(lane.Routes(reach, c.rank))
}

// setNode names the data-path nodes told of failed and departed peers,
// so that operations pending on them end.
func (c *control) setNode(node dataNodes) {
	c.mu.Lock()
	c.node = node
	c.mu.Unlock()
}

// send is core.Config.Send: msg to the PE actor of rank.
func (c *control) send(rank int, msg any) bool {
	return c.lane.Send(rank, core.PEActor(rank), msg)
}

// detected reports that this PE detected rank's failure (gossip, the
// start-up checks). Before the PE runs, the coordinator is told at once,
// so that the start-up agreement fails naming rank, and the PE hears once
// it runs (started).
func (c *control) detected(rank int, reason string) { c.lost(rank, reason, false) }

// lost is the lane's OnLost, and detected's body: linked says rank's link
// was up and ended, after delivering everything it carried, which the
// notice to the PE then says (actors.PEFailed.Link).
func (c *control) lost(rank int, reason string, linked bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	// Recorded and sent under c.mu: an abort held for its cause
	// (holdAbort) that finds this loss is sent after this notice.
	c.loss.add(rank, reason)
	me, started := c.rank, c.started
	notice := &actors.PEFailed{Rank: rank, Reason: reason, Origin: me}
	switch {
	case !started:
		c.early = append(c.early, detection{rank, reason})
		c.sys.Root.Send(coordinatorPID(), notice)
	case isAbort(reason):
		c.holdAbort(me, notice) // behind the failure that caused it
	default:
		// Through the PE actor's mailbox, behind the messages the peer
		// sent before its link ended: a GlobalExit there wins over the
		// loss.
		notice.Link = linked
		c.sys.Root.Send(c.sys.NewLocalPID(core.PEActor(me)), notice)
	}
}

// left is the lane's OnLeft: rank's PE finalized and closed its link. The
// PE actor hears it behind the notices that link carried (core.PeerLeft)
// and then fails the data paths to rank (onPeerLeft). Before the PE runs
// nothing is in flight to rank (a PE that gives up during start-up
// aborts, which the lane reports through OnLost, not here).
func (c *control) left(rank int) {
	c.mu.Lock()
	me, started := c.rank, c.started
	c.mu.Unlock()
	if started {
		c.sys.Root.Send(c.sys.NewLocalPID(core.PEActor(me)), core.PeerLeft{Rank: rank})
	}
}

// onPeerLeft is the PE's OnPeerLeft hook: what is in flight to rank on a
// data path whose provider would not end it now fails.
func (c *control) onPeerLeft(rank int) {
	c.mu.Lock()
	node := c.node
	c.mu.Unlock()
	node.PeerLeft(rank)
}

// started says that the PE actor runs: detections made before go to it.
func (c *control) markStarted() {
	c.mu.Lock()
	c.started = true
	early := c.early
	c.early = nil
	c.mu.Unlock()
	for _, d := range early {
		c.detected(d.rank, d.reason)
	}
}

// onFailure is the PE's OnFailure hook: this PE has just recorded that
// rank failed, detected by origin (this PE, or the sender of a notice).
// It fails the data paths to rank and through it, so that operations
// pending on them end now instead of at the transport's timeout, closes
// the lane's link to it, and sends the flood's notices.
func (c *control) onFailure(rank int, reason string, origin int, link bool) {
	c.mu.Lock()
	node, flood := c.node, c.flood
	var notices []floodNotice
	if flood != nil {
		notices = flood.step(rank, origin)
	}
	me := c.rank
	c.mu.Unlock()
	if node != nil {
		node.PeerFailed(rank)
	}
	if c.lane != nil {
		c.lane.PeerFailed(rank)
	}
	if origin != me && len(notices) > 0 {
		c.log.Info("forwarding a failure notice", "failed", rank, "detected_by", origin, "to", len(notices))
	}
	m := &actors.PEFailed{Rank: rank, Reason: reason, Origin: origin, Link: link}
	for _, n := range notices {
		c.post(n.to, m)
	}
}

// awaitGone waits until every linked PE but except (-1: none) has left
// or failed, or d has passed.
func (c *control) awaitGone(except int, d time.Duration) { c.lane.AwaitGone(except, d) }

// close stops the coordinator (its last answers are queued on the lane
// by then), closes the lane (those answers go out before its bye) and the
// actor system. abort says this PE gives up (its start-up failed): the
// peers then take its departure for a failure instead of waiting for it.
func (c *control) close(abort bool) error {
	if c.coord != nil {
		_ = c.sys.Root.StopFuture(c.coord).Wait()
	}
	closeLane := c.lane.Close
	if abort {
		closeLane = c.lane.Abort
	}
	err := closeLane()
	c.sys.Shutdown()
	return err
}

// watchGossip turns membership's failure reports (membership.World's
// Failures) into detections. It ends when the channel closes.
//
// Once this PE finalizes, the control lane alone decides: Finalize waits
// for rank 0's answer on the lane, which the others' departures, gossiped
// over UDP, can overtake. A peer that left so has already finalized, and
// a real failure (a crash, a silent host) ends its lane too, within
// FailureTimeout, about as soon as gossip would find it.
func (c *control) watchGossip(failures <-chan int, n int) {
	for rank := range failures {
		switch {
		case rank < 0 || rank >= n:
		case c.finalizing.Load():
			c.log.Debug("gossip reports a departure while this PE finalizes; the control lane decides", "pe", rank)
		default:
			c.detected(rank, "gossip failure detection")
		}
	}
}
