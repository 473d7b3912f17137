package world

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"os"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/goshmem/shmem/actors"
	"github.com/goshmem/shmem/bootstrap"
	"github.com/goshmem/shmem/bootstrap/rendezvous"
	"github.com/goshmem/shmem/heap"
	"github.com/goshmem/shmem/internal/core"
	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/internal/secure"
	"github.com/goshmem/shmem/membership"
	"github.com/goshmem/shmem/transport"
	"github.com/goshmem/shmem/transport/rdma"
	"github.com/goshmem/shmem/transport/udma"
)

// processSpin is how long a PE polls before it sleeps on its futex bell
// (see core.Config.Spin): longer than a futex wake-up takes on a loaded VM
// (10-20 µs measured), so two PEs in a barrier loop do not fall into
// waking each other every round; the poll yields, so 8 PEs on 2 cores
// still run (their 600-barrier test got faster: 7 s at 20 µs, 2.5 s here).
const processSpin = 200 * time.Microsecond

// Config describes this process's place in a multi-process world.
type Config struct {
	UID        bootstrap.UniqueID
	Rank, NPEs int
	HeapSize   int64
	// TLS selects the credentials of every connection: nil means the job
	// credentials derived from the unique ID's secret (the default);
	// Insecure turns TLS off.
	TLS *TLSConfig
	// Network makes every peer, even one on this host, use the network
	// transport: for measuring it, and for hosts whose /dev/shm is private.
	Network bool
	// HostID overrides the host identity that decides which peers share
	// memory. Default: boot ID and hostname.
	HostID string
	// ListenHost is the address this PE's control and data listeners bind.
	// Default: the unique ID's host when it is a loopback address, else the
	// address the CANN SHMEM interface rules select.
	ListenHost string
	// Timeout bounds start-up (rendezvous) and control-plane agreements.
	// Default 60 s for start-up: launchers start ranks seconds apart.
	Timeout      time.Duration
	Logger       *slog.Logger
	OnGlobalExit func(status int)
	// Gossip, if set, forms the world by gossip instead of the rendezvous;
	// Rank and NPEs then come from it (Rank may be -1: assigned).
	Gossip *GossipConfig
	// RelayVia forces relays, in EnvRelayVia's syntax ("a-c:b,..."); every
	// PE must be given the same. Default "": pairs are relayed only when
	// they cannot connect to each other.
	RelayVia string
	// BusyPoll is how long a read of a network connection polls its
	// socket before it parks (rdma.Config.BusyPoll). Default 0: park at
	// once. shmem.Init passes 50 µs unless SHMEM_BUSY_POLL says otherwise:
	// polling saves a thread wake-up per round trip, and the node stops
	// polling by itself while unanswered or on oversubscribed cores.
	BusyPoll time.Duration
	// Provider selects the data path to PEs on other hosts: ProviderTCP
	// (default, also "") or ProviderFabric (SHMEM_RDMA_PROVIDER). TCP is
	// the default because it runs everywhere without cgo and is encrypted;
	// fabric (RDMA NICs) must be chosen, and is logged as a warning,
	// because its data is not (see startFabric). Same-host PEs keep shared
	// memory and relayed pairs TCP either way; every PE must choose alike.
	Provider string
	// Fabric tunes the fabric provider.
	Fabric FabricConfig
}

// TLSConfig carries user-supplied TLS credentials (shmem.WithTLS).
type TLSConfig struct {
	Insecure       bool
	Server, Client *tls.Config
}

// Join forms the world and returns this process's PE.
func Join(ctx context.Context, cfg Config) (*core.PE, error) {
	j := &joiner{cfg: cfg, log: cfg.Logger}
	if j.log == nil {
		j.log = slog.New(slog.DiscardHandler)
	}
	p, err := j.join(ctx)
	if err != nil {
		j.release()
		return nil, err
	}
	return p, nil
}

type joiner struct {
	cfg                  Config
	log                  *slog.Logger
	job                  string
	hostID               string
	serverTLS, clientTLS *tls.Config

	seg    *udma.Segment
	peers  []*udma.Segment
	node   *rdma.Node
	fab    fabricEndpoint // nil unless Config.Provider is ProviderFabric
	sys    *actor.ActorSystem
	ctl    *control
	p      *core.PE
	closed atomic.Bool

	bell        transport.Bell // this PE's: the segment's futex bell, or a LocalBell (see join)
	gossipWorld *membership.World
	dataLn      net.Listener
}

func (j *joiner) fail(err error, detail string, args ...any) error {
	return errs.New("Init", j.cfg.Rank, errs.NoPE, err, detail, args...)
}

func (j *joiner) join(ctx context.Context) (*core.PE, error) {
	c := &j.cfg
	if c.Gossip == nil && (c.NPEs < 1 || c.Rank < 0 || c.Rank >= c.NPEs) {
		return nil, j.fail(errs.ErrInvalidArgument, "rank %d of %d", c.Rank, c.NPEs)
	}
	if err := c.UID.Validate(); err != nil {
		return nil, j.fail(errs.ErrInvalidArgument, "unique ID: %v", err)
	}
	if c.Timeout <= 0 {
		c.Timeout = 60 * time.Second
	}
	j.job = c.UID.JobName()
	if err := j.credentials(); err != nil {
		return nil, err
	}
	host, err := j.listenHost()
	if err != nil {
		return nil, err
	}
	if j.ctl, err = startControl(host, j.log, c.UID.Secret[:], j.serverTLS, j.clientTLS); err != nil {
		return nil, j.fail(errs.ErrBootstrap, "control plane: %v", err)
	}
	j.sys = j.ctl.sys
	// The data listener is opened before the rank is known so that its
	// address can travel in this PE's record.
	dataLn, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	j.dataLn = dataLn // closed by release until the transport owns it
	if err != nil {
		return nil, j.fail(errs.ErrBootstrap, "data listener on %s: %v", host, err)
	}
	j.hostID = c.HostID
	if j.hostID == "" {
		j.hostID = hostIdentity()
	}
	if err := j.startFabric(); err != nil {
		return nil, err
	}
	mine := record{Version: recordVersion, Rank: c.Rank, Host: j.hostID,
		Actor: j.sys.Address(), Data: dataLn.Addr().String(), HeapSize: c.HeapSize, PID: os.Getpid(),
		Wire: rdma.WireVersion}
	if j.fab != nil {
		mine.Fabric = j.fab.Address()
	}
	recs, err := j.exchange(ctx, mine)
	if err != nil {
		return nil, err
	}
	if err := checkPeers(c.Rank, c.HeapSize, recs); err != nil {
		return nil, err
	}
	if err := j.checkFabric(recs); err != nil {
		return nil, err
	}
	if j.seg == nil { // startFabric creates it before the exchange
		if j.seg, err = udma.Create(j.job, c.Rank, int(c.HeapSize)); err != nil {
			return nil, j.fail(errs.ErrBootstrap, "creating the shared heap: %v", err)
		}
	}
	h := heap.New(j.seg.Heap())
	// A heap no other process maps is written only by this process's
	// goroutines (the rdma server), so its waiters park on a channel: a
	// ring then hands the waiter to the ringing thread instead of waking
	// another thread through futex(2).
	j.bell = j.seg.Bell()
	if !j.sharesHost(recs) {
		j.bell = transport.NewLocalBell()
	}
	if j.node, err = rdma.Listen(rdma.Config{
		Rank: c.Rank, NPEs: c.NPEs, Heap: j.seg.Heap(), Bell: j.bell, BusyPoll: c.BusyPoll,
		ServerTLS: j.serverTLS, ClientTLS: j.clientTLS, Listener: dataLn,
		Authenticate: j.authenticate, Logger: j.log,
	}); err != nil {
		return nil, j.fail(errs.ErrBootstrap, "network transport: %v", err)
	}
	j.dataLn = nil
	via, reach, err := j.routes(recs)
	if err != nil {
		return nil, err
	}
	if err := j.connectFabric(recs, via); err != nil {
		return nil, err
	}
	paths, shared, err := j.paths(recs, via)
	if err != nil {
		return nil, err
	}
	peers := make([]*actor.PID, c.NPEs)
	for r, rec := range recs {
		peers[r] = actor.NewPID(rec.Actor, core.PEActor(r))
	}
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
	socketWriters := len(shared) < c.NPEs && spin > 0
	j.ctl.setWorld(c.Rank, recs, reach, j.failers())
	j.p, err = core.Start(core.Config{
		Rank: c.Rank, NPEs: c.NPEs, WorldID: worldID(c.UID), Heap: h, Bell: j.waitBell(), Paths: paths,
		Shared: shared, System: j.sys, Coordinator: coordinatorPID(recs),
		Send: func(r int, m any) bool {
			// protoactor's remote layer carries protobuf only: the
			// message travels in its msgpack envelope.
			env, err := actors.Wrap(m)
			return err == nil && r >= 0 && r < len(peers) && j.ctl.post(peers[r], env)
		},
		Logger: j.log, OnGlobalExit: j.onGlobalExit(), OnFailure: j.ctl.onFailure,
		Release: j.release, Spin: spin, SocketWriters: socketWriters,
	})
	if err != nil {
		return nil, err
	}
	j.ctl.watch(j.p)
	if j.gossipWorld != nil {
		go j.ctl.watchGossip(j.gossipWorld, recs)
	}
	// Every PE has mapped every same-host heap once this round completes,
	// so the names can go: a crash from here on leaves nothing in /dev/shm.
	unlock := j.p.CollectiveLock()
	_, err = j.p.Agree("Init", "init", 1, worldRanks(c.NPEs), c.Rank, nil)
	unlock()
	if err != nil {
		return nil, err
	}
	_ = j.seg.Unlink()
	j.seg.SetState(udma.StateAlive)
	return j.p, nil
}

// onGlobalExit wraps the caller's handler: before a process that sent
// the exit notice ends, the notice must reach every PE, or a PE that saw
// the connection drop first would report a failure instead of the exit.
// The caller sent it to every PE and rank 0 passed it on (rankzero.go), so
// those two wait until the others are gone, rank 0 for all but the caller
// (which waits for rank 0 in turn); the others, mere receivers, end at
// once, which is what lets the two stop waiting.
func (j *joiner) onGlobalExit() func(origin, status int) {
	exit := j.cfg.OnGlobalExit
	if exit == nil {
		return nil
	}
	return func(origin, status int) {
		switch j.cfg.Rank {
		case origin:
			j.ctl.awaitGone(-1, lingerOnExit)
		case 0:
			j.ctl.awaitGone(origin, lingerOnExit)
		}
		exit(status)
	}
}

// exchange gives every PE every PE's record: through the rank-0
// rendezvous the unique ID names, or through gossip, which also assigns
// this PE its rank.
func (j *joiner) exchange(ctx context.Context, mine record) ([]record, error) {
	c := &j.cfg
	if c.Gossip != nil {
		return j.gossip(ctx, mine)
	}
	b, err := msgpack.Marshal(&mine)
	if err != nil {
		return nil, err
	}
	raw, err := rendezvous.Exchange(ctx, rendezvous.Config{
		Addr: c.UID.Addr, Rank: c.Rank, NPEs: c.NPEs, Secret: c.UID.Secret[:],
		ServerTLS: j.serverTLS, ClientTLS: j.clientTLS, Timeout: c.Timeout, Logger: j.log,
	}, b)
	if err != nil {
		return nil, err
	}
	recs, err := decodeRecords(raw)
	if err != nil {
		return nil, j.fail(errs.ErrBootstrap, "%v", err)
	}
	return recs, nil
}

// paths returns the data path to every PE: a mapping for PEs on this host,
// the network for the others (the fabric node's when it runs, netPath),
// through a relay where via says so (always TCP: the fabric cannot relay).
// When this PE relays for others to a PE it maps or reaches by the fabric,
// it also opens a TCP path to that PE, because relayed frames travel on
// TCP paths only.
func (j *joiner) paths(recs []record, via [][]int) ([]transport.Path, []int, error) {
	c := &j.cfg
	fence := new(atomic.Uint64)
	paths := make([]transport.Path, c.NPEs)
	var shared []int
	j.peers = make([]*udma.Segment, c.NPEs)
	for r, rec := range recs {
		switch {
		case r == c.Rank:
			paths[r] = udma.NewPath(j.seg.Heap(), j.bell, fence, true)
			shared = append(shared, r)
		case via[c.Rank][r] != direct:
			v := via[c.Rank][r]
			j.log.Info("relaying", "peer", r, "via", v)
			paths[r] = exitAware{j.node.RelayPath(r, v, recs[v].Data), &j.p}
		case j.sameHost(rec):
			seg, err := openPeer(j.job, r, int(c.HeapSize), c.Timeout)
			if err != nil {
				return nil, nil, j.fail(errs.ErrBootstrap, "mapping the heap of PE %d: %v", r, err)
			}
			j.peers[r] = seg
			paths[r] = udma.NewPath(seg.Heap(), seg.Bell(), fence, true)
			shared = append(shared, r)
		default:
			p, err := j.netPath(r, rec)
			if err != nil {
				return nil, nil, err
			}
			paths[r] = exitAware{p, &j.p}
		}
	}
	for a := range via {
		for b, v := range via[a] {
			if v == c.Rank && (j.peers[b] != nil || j.fabricPeer(b, recs[b], via)) {
				j.node.Path(b, recs[b].Data)
			}
		}
	}
	return paths, shared, nil
}

func coordinatorPID(recs []record) *actor.PID { return actor.NewPID(recs[0].Actor, coordinatorName) }

// openPeer maps a peer's segment, waiting while its owner is still
// creating it: owners create their segments right after the exchange, so
// the wait is short.
func openPeer(job string, rank, size int, timeout time.Duration) (*udma.Segment, error) {
	deadline := time.Now().Add(timeout)
	for delay := 50 * time.Microsecond; ; delay = min(2*delay, 10*time.Millisecond) {
		seg, err := udma.Open(job, rank, size)
		// A segment seen mid-creation is short or has no header yet;
		// only the deadline tells it from a bad one.
		if err == nil || time.Now().After(deadline) {
			return seg, err
		}
		time.Sleep(delay)
	}
}

func worldRanks(n int) []int {
	r := make([]int, n)
	for i := range r {
		r[i] = i
	}
	return r
}

// worldID is the same on every PE of the job and differs between jobs.
func worldID(uid bootstrap.UniqueID) uint64 {
	var id uint64
	for i, b := range uid.Secret[:8] {
		id |= uint64(b) << (8 * i)
	}
	return id | 1
}

// release undoes whatever join built; Finalize calls it last.
func (j *joiner) release() error {
	if !j.closed.CompareAndSwap(false, true) {
		return nil
	}
	var err error
	if j.ctl != nil {
		err = errors.Join(err, j.ctl.close())
	}
	if j.gossipWorld != nil {
		_ = j.gossipWorld.Leave(time.Second)
		err = errors.Join(err, j.gossipWorld.Close())
	}
	if j.node != nil {
		err = errors.Join(err, j.node.Close())
	}
	if j.fab != nil { // before the heap it registered is unmapped
		err = errors.Join(err, j.fab.Close())
	}
	if j.dataLn != nil {
		_ = j.dataLn.Close()
	}
	for _, s := range j.peers {
		if s != nil {
			err = errors.Join(err, s.Close())
		}
	}
	if j.seg != nil {
		j.seg.SetState(udma.StateFinalized)
		_ = j.seg.Unlink()
		err = errors.Join(err, j.seg.Close())
	}
	return err
}

func (j *joiner) credentials() error {
	t := j.cfg.TLS
	switch {
	case t != nil && t.Insecure:
		j.log.Warn("TLS is off: control and data connections are plain TCP, authenticated by the job secret only")
		return nil
	case t != nil:
		j.serverTLS, j.clientTLS = t.Server, t.Client
		return nil
	}
	s, c, err := secure.JobConfigs(j.cfg.UID.Secret[:])
	if err != nil {
		return j.fail(errs.ErrTLS, "%v", err)
	}
	j.serverTLS, j.clientTLS = s, c
	return nil
}

// authenticate proves the job secret on every data connection, after TLS
// and before any frame: even with TLS off no peer without the secret gets
// a frame processed.
func (j *joiner) authenticate(c net.Conn, server bool) error {
	return secure.Handshake(c, j.cfg.UID.Secret[:], server, time.Now().Add(10*time.Second))
}

func (j *joiner) listenHost() (string, error) {
	if j.cfg.ListenHost != "" {
		return j.cfg.ListenHost, nil
	}
	h, _, err := net.SplitHostPort(j.cfg.UID.Addr)
	if err != nil {
		return "", j.fail(errs.ErrInvalidArgument, "unique ID address %q: %v", j.cfg.UID.Addr, err)
	}
	if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
		return h, nil
	}
	ifaces, err := bootstrap.SystemIfaces()
	if err != nil {
		return "", err
	}
	ch, err := bootstrap.SelectListenAddr(os.Getenv, ifaces)
	if err != nil {
		return "", err
	}
	return ch.Host, nil
}

// sharesHost reports whether another PE of recs maps this PE's heap.
func (j *joiner) sharesHost(recs []record) bool {
	for r, rec := range recs {
		if r != j.cfg.Rank && j.sameHost(rec) {
			return true
		}
	}
	return false
}

// sameHost reports whether rec's PE and this one map each other's heaps:
// same host, and the network path not forced.
func (j *joiner) sameHost(rec record) bool { return rec.Host == j.hostID && !j.cfg.Network }
