package world

import (
	"context"
	"errors"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/goshmem/shmem/heap"
	"github.com/goshmem/shmem/internal/affinity"
	"github.com/goshmem/shmem/internal/core"
	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
	"github.com/goshmem/shmem/transport/rdma"
	"github.com/goshmem/shmem/transport/udma"
)

// undo collects a stage's closers; its close runs them last first.
type undo []func() error

func (u *undo) add(f func() error) { *u = append(*u, f) }

func (u undo) close() error {
	var err error
	for i := len(u) - 1; i >= 0; i-- {
		err = errors.Join(err, u[i]())
	}
	return err
}

// exchangeStage opens what this PE's record advertises (the control
// lane, the data listener, the fabric node with the heap it registers)
// and exchanges records with every PE, by the rendezvous or by gossip.
func (j *joiner) exchangeStage(ctx context.Context) (func() error, error) {
	c := &j.cfg
	var u undo
	if err := j.credentials(); err != nil {
		return nil, err
	}
	host, err := j.listenHost()
	if err != nil {
		return nil, err
	}
	if c.Gossip == nil && c.Rank == 0 {
		if err := j.checkRendezvousPort(); err != nil {
			return nil, err
		}
	}
	ctlLn, err := c.Ports.Listen(host, j.laterPorts()...)
	if err != nil {
		return nil, j.fail(errs.ErrBootstrap, "control listener on %s: %v", host, err)
	}
	if j.ctl, err = startControl(ctlLn, j.log, c.UID.Secret[:], j.serverTLS, j.clientTLS, c.FailureTimeout); err != nil {
		return nil, j.fail(errs.ErrBootstrap, "control plane: %v", err)
	}
	u.add(func() error { return j.ctl.close(j.aborted) })
	if j.dataLn, err = c.Ports.Listen(host, j.laterPorts()...); err != nil {
		return u.close, j.fail(errs.ErrBootstrap, "data listener on %s: %v", host, err)
	}
	dataAddr := j.dataLn.Addr().String()
	u.add(func() error {
		if j.dataLn != nil { // not handed to the TCP node
			return j.dataLn.Close()
		}
		return nil
	})
	j.hostID = c.HostID
	if j.hostID == "" {
		j.hostID = hostIdentity()
	}
	if err := j.startFabric(&u); err != nil {
		return u.close, err
	}
	mine := record{Version: recordVersion, Rank: c.Rank, Host: j.hostID,
		Control: j.ctl.lane.Addr(), Data: dataAddr, HeapSize: c.HeapSize, PID: os.Getpid(),
		Wire: rdma.WireVersion, Statics: int64(len(c.Statics)), StaticsLayout: c.StaticsLayout}
	if j.fab != nil {
		mine.Fabric = j.fab.Address()
	}
	recs, err := j.exchange(ctx, mine)
	if j.gossipWorld != nil {
		u.add(func() error {
			// A PE that gave up departs as a failure, as its control
			// lane's abort says; a finalizing one gracefully.
			if j.aborted {
				_ = j.gossipWorld.Abandon(time.Second)
			} else {
				_ = j.gossipWorld.Leave(time.Second)
			}
			return j.gossipWorld.Close()
		})
	}
	if err != nil {
		return u.close, err
	}
	if err := checkPeers(c.Rank, mine, recs); err != nil {
		return u.close, err
	}
	if err := j.checkFabric(recs); err != nil {
		return u.close, err
	}
	j.recs = recs
	return u.close, nil
}

// routesStage starts the lane's links to rank 0, agrees through rank 0's
// coordinator on who can connect to whom, plans the data routes from that
// and links the other pairs of the lane (routes, reach.go).
func (j *joiner) routesStage(context.Context) (func() error, error) {
	if err := j.ctl.join(j.cfg.Rank, j.recs); err != nil {
		return nil, err
	}
	var err error
	j.via, j.reach, err = j.routes(j.recs)
	if err != nil {
		return nil, err
	}
	j.ctl.setRoutes(j.reach)
	return nil, nil
}

// providersStage makes the heap and a data path to every PE: shared
// memory on this host, the TCP node (or the fabric's) to other hosts,
// relays where the plan says.
func (j *joiner) providersStage(context.Context) (func() error, error) {
	c := &j.cfg
	var u undo
	if j.seg == nil { // startFabric creates it before the exchange
		seg, err := j.createSegment()
		if err != nil {
			return nil, j.fail(errs.ErrBootstrap, "creating the shared heap: %v", err)
		}
		j.seg = seg
		u.add(closeSegment(seg))
	}
	// A heap no other process maps is written only by this process's
	// goroutines (the rdma server), so its waiters park on a channel: a
	// ring then hands the waiter to the ringing thread instead of waking
	// another thread through futex(2).
	j.bell = j.seg.Bell()
	if !j.sharesHost(j.recs) {
		j.bell = transport.NewLocalBell()
	}
	node, err := rdma.Listen(rdma.Config{
		Rank: c.Rank, NPEs: c.NPEs, Heap: j.seg.Reservation(), Usable: j.seg.Usable, Statics: c.Statics, Bell: j.bell, BusyPoll: c.BusyPoll, LockedCallers: c.LockedCallers,
		OnContended: j.widen(), ServerTLS: j.serverTLS, ClientTLS: j.clientTLS, Listener: j.dataLn,
		Authenticate: j.authenticate, Logger: j.log,
	})
	if err != nil {
		return u.close, j.fail(errs.ErrBootstrap, "network transport: %v", err)
	}
	j.node, j.dataLn = node, nil
	// Mapped peers close after the node, whose server may write into them.
	u.add(func() error {
		var err error
		for _, s := range j.peers {
			if s != nil {
				err = errors.Join(err, s.Close())
			}
		}
		return err
	})
	u.add(j.node.Close)
	if err := j.connectFabric(j.recs, j.via); err != nil {
		return u.close, err
	}
	j.paths, j.shared, err = j.makePaths(j.recs, j.via)
	return u.close, err
}

// widen returns rdma.Config.OnContended: the first time the node's polls
// rest for contention it moves the PE's threads onto Config.WidenTo
// (nil when there is none).
func (j *joiner) widen() func() {
	cpus := j.cfg.WidenTo
	if len(cpus) == 0 {
		return nil
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			if err := affinity.Widen(cpus); err != nil {
				j.log.Warn("cores oversubscribed: unbinding the PE failed", "rank", j.cfg.Rank, "cpus", affinity.FormatList(cpus), "err", err)
				return
			}
			j.log.Info("cores oversubscribed: PE unbound", "rank", j.cfg.Rank, "cpus", affinity.FormatList(cpus))
		})
	}
}

// controlStage starts the PE on the paths and wires it to the control
// plane: its notices travel on the lane, the lane's and gossip's failure
// detections reach its actor, and its recorded failures are flooded.
// Init's closing agreement proves every PE mapped every same-host heap.
func (j *joiner) controlStage(context.Context) (func() error, error) {
	c := &j.cfg
	// A waiting PE polls first (processSpin): while it polls it is not
	// armed, so puts and atomics arriving meanwhile wake nobody, and with
	// network peers it keeps a thread in the runtime's poller meanwhile
	// (core.Config.SocketWriters). With busy-polling reads a PE on a
	// LocalBell parks at once instead: the polling reader then has the
	// core, and its ring runs the waiter on the reader's own thread.
	spin := processSpin
	if _, local := j.bell.(*transport.LocalBell); local && c.BusyPoll > 0 {
		spin = 0
	}
	socketWriters := len(j.shared) < c.NPEs && spin > 0
	j.ctl.setNode(j.dataNodes())
	var err error
	j.p, err = core.Start(core.Config{
		Rank: c.Rank, NPEs: c.NPEs, WorldID: worldID(c.UID), Heap: heap.NewGrowable(j.seg.Reservation(), c.HeapSize), Bell: j.waitBell(),
		Paths: j.paths, Shared: j.shared, System: j.ctl.sys, Coordinator: coordinatorPID(),
		Send: j.ctl.send, Logger: j.log, OnGlobalExit: j.onGlobalExit(), OnFailure: j.onFailure, OnPeerLeft: j.ctl.onPeerLeft,
		OnFinalizedEarly: j.cfg.Status.PeerFinalizedEarly, Finalized: j.cfg.Status.Finalized,
		Release: j.release, Leaving: j.leaving, Spin: spin, SocketWriters: socketWriters,
		Grow: j.growOwn, Grown: j.growPeers,
		Metrics: c.Metrics, PathKinds: j.pathKinds(), Statics: c.Statics,
	})
	if err != nil {
		return nil, err
	}
	j.ctl.setEnded(j.endedCause)
	j.ctl.markStarted()
	if j.gossipWorld != nil {
		go j.ctl.watchGossip(j.gossipWorld.Failures(), c.NPEs)
	}
	// Every PE has mapped every same-host heap once this round completes,
	// so the names can go: a crash from here on leaves nothing in /dev/shm.
	err = j.initVote(func() error {
		unlock := j.p.CollectiveLock()
		defer unlock()
		_, err := j.p.Agree("Init", "init", 1, worldRanks(c.NPEs), c.Rank, nil)
		return err
	})
	if err != nil {
		return j.stopPE(err), j.blameInit(err)
	}
	// Every PE unlinks every same-host name it mapped, not only its own:
	// a PE killed between the agreement and its own Unlink would leave
	// its name. Unlink checks the file's identity, so a name already gone
	// or reused is left alone.
	_ = j.seg.Unlink()
	for _, s := range j.peers {
		if s != nil {
			_ = s.Unlink()
		}
	}
	j.seg.SetState(udma.StateAlive)
	return nil, nil
}

// initVote votes in Init's closing agreement (agree) once the name of a
// heap no peer maps is gone (unlinkUnshared): the peers, whose Init ends
// with the vote, unlink only the names they mapped, and a failed Init
// reaps the job's names only before it.
func (j *joiner) initVote(agree func() error) error {
	j.unlinkUnshared()
	return agree()
}

// unlinkUnshared removes the /dev/shm name of this PE's heap when no peer
// maps it (no PE on this host, or the network path forced): nobody opens
// it by name. Left until after the vote, a PE killed between the vote and
// its own unlink left its name behind for good (the fault suite's kills
// during Init over TCP: the leak check failed).
func (j *joiner) unlinkUnshared() {
	if !j.sharesHost(j.recs) {
		_ = j.seg.Unlink() // on error the unlink after the vote tries again
	}
}

// stopPE is the closer of a PE that started but whose Init failed: it
// ends the PE (its actor, its waits) before the earlier stages release
// what it uses. Left running, it took a failure notice the lane delivered
// after the heap segment was unmapped, and rang the bell in that segment:
// a fault (exit status 2) of one PE in ~200 kills during Init on shared
// memory. Abort first, so that Finalize's agreement does not wait.
func (j *joiner) stopPE(cause error) func() error {
	p := j.p
	return func() error {
		p.Abort(cause)
		_ = p.Finalize() // its error is cause again, or the failures cause names
		return nil
	}
}

// closeSegment returns the closer of this PE's own heap segment.
func closeSegment(seg *udma.Segment) func() error {
	return func() error {
		seg.SetState(udma.StateFinalized)
		_ = seg.Unlink()
		return seg.Close()
	}
}

// rendezvousPort is the port of the unique ID's address, which rank 0's
// rendezvous binds after the listeners (0 in a gossip world).
func (j *joiner) rendezvousPort() int {
	if j.cfg.Gossip != nil {
		return 0
	}
	_, p, err := net.SplitHostPort(j.cfg.UID.Addr)
	if err != nil {
		return 0
	}
	port, _ := strconv.Atoi(p)
	return port
}

// laterPorts are the ports a process of the job binds after this PE's
// listeners open, which those listeners must therefore not take (see
// bootstrap.PortRange.Listen): the rendezvous port, or in a gossip world
// the seeds' and this member's gossip ports.
func (j *joiner) laterPorts() []int {
	g := j.cfg.Gossip
	if g == nil {
		return []int{j.rendezvousPort()}
	}
	var ports []int
	for _, a := range append([]string{g.Bind}, g.Seeds...) {
		if _, p, err := net.SplitHostPort(a); err == nil {
			if port, err := strconv.Atoi(p); err == nil && port > 0 {
				ports = append(ports, port)
			}
		}
	}
	return ports
}

// checkRendezvousPort refuses, on rank 0, a unique ID whose port lies
// outside Config.Ports: the other ranks would find it closed by the
// firewall the range was opened in, and time out without saying why.
func (j *joiner) checkRendezvousPort() error {
	if err := j.cfg.Ports.CheckPort(j.rendezvousPort(), "the unique ID's address "+j.cfg.UID.Addr); err != nil {
		return j.fail(errs.ErrInvalidArgument, "%v", err)
	}
	return nil
}
