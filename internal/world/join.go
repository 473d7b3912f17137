package world

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"sync/atomic"
	"time"

	"github.com/goshmem/shmem/bootstrap"
	"github.com/goshmem/shmem/internal/core"
	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/internal/pestatus"
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
	// HeapLimit lets the heap grow to this many bytes (see heapgrow.go);
	// at most HeapSize, the default, means no growth. Every PE passes the
	// same; the fabric provider keeps the heap at HeapSize.
	HeapLimit int64
	// Metrics turns on the PE's metrics (core.Config.Metrics).
	Metrics bool
	// Statics is the PE's statics region (shmem.WithStatics): the data
	// node serves it to the peers, the fabric node (if any) registers it
	// for them, and core.PE.StaticsPath reaches theirs.
	// Optional.
	Statics []byte
	// StaticsLayout digests what lies where in Statics
	// (shmem.WithStaticsLayout); 0: unknown, not compared.
	StaticsLayout uint64
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
	// Ports confines the control and data listeners, rank 0's rendezvous
	// port and the fabric node's endpoint (for providers that bind an IP
	// port: tcp;ofi_rxm, sockets, udp;ofi_rxd) to a range a firewall can
	// open (SHMEM_PORT_RANGE). Default: any port.
	Ports bootstrap.PortRange
	// FailureTimeout is how long a PE may stay silent on the control lane
	// before its peers declare it failed (SHMEM_FAILURE_TIMEOUT). Default
	// 3 s: a killed host is noticed in about that, while a PE paused for
	// less (a debugger, a VM pause, a cgroup freeze) survives. A PE that
	// was itself paused restarts its clocks instead of blaming its peers.
	FailureTimeout time.Duration
	// Timeout bounds start-up (rendezvous) and control-plane agreements.
	// Default 60 s for start-up: launchers start ranks seconds apart.
	Timeout      time.Duration
	Logger       *slog.Logger
	OnGlobalExit func(status int)
	// Status, if not nil, is where this PE tells the launcher that
	// started it how its run ends (pestatus): that it finalized, that it
	// called GlobalExit (with OnGlobalExit set, the one way the call ends
	// every process), and the first PE it recorded failed. Default nil:
	// nothing is told.
	Status *pestatus.Writer
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
	// LockedCallers says that the PE's calls come from goroutines locked
	// to their threads (rdma.Config.LockedCallers): the C API's. Default
	// false.
	LockedCallers bool
	// WidenTo lists the CPUs this PE's threads move to when a network
	// read's busy poll finds the PE's core oversubscribed
	// (rdma.Config.OnContended, affinity.Widen): the launcher sets it
	// (affinity.EnvAllowed) when it binds PEs. Default nil: the threads
	// stay where they are.
	WidenTo []int
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
		j.aborted = true
		_ = j.release()
		if j.job != "" {
			// No PE of a job whose Init failed here can start, so none
			// needs its name: remove every one left on this host, a peer
			// killed after creating its segment included (it cannot
			// unlink its own). Mappings stay valid; Reap removes names only.
			_, _ = udma.Reap(j.job)
		}
		return nil, err
	}
	return p, nil
}

// joiner carries start-up from stage to stage. Each stage fills in the
// fields it owns, read by the stages after it (see join).
type joiner struct {
	cfg                  Config
	log                  *slog.Logger
	job                  string
	hostID               string
	serverTLS, clientTLS *tls.Config

	// exchange
	ctl         *control
	dataLn      net.Listener   // until the TCP node owns it
	fab         fabricEndpoint // nil unless Config.Provider is ProviderFabric
	seg         *udma.Segment
	gossipWorld *membership.World
	recs        []record
	// routes
	via   [][]int
	reach [][]bool
	// providers
	node   *rdma.Node
	peers  []*udma.Segment
	bell   transport.Bell // this PE's: the segment's futex bell, or a LocalBell
	paths  []transport.Path
	shared []int
	// control
	p *core.PE

	closers []func() error // of the stages run, in order
	closed  atomic.Bool
	aborted bool // Join failed: the release tells the peers this PE gave up
}

func (j *joiner) fail(err error, detail string, args ...any) error {
	return errs.New("Init", j.cfg.Rank, errs.NoPE, err, detail, args...)
}

// stage is one step of start-up. It returns what undoes it (nil:
// nothing), also when it fails part way: a stage undoes nothing itself.
type stage struct {
	name string
	run  func(ctx context.Context) (closer func() error, err error)
}

// join runs the stages in order:
//
//	exchange   listeners (control lane, data, fabric), then every PE's record
//	routes     the lane's links to rank 0, reach probes and their agreement,
//	           the data plan (who relays for whom) and the lane's other links
//	providers  the heap, shared memory, TCP and fabric paths to every PE
//	control    the PE itself, wired to the lane and its failure detectors
//
// Each stage's closer is kept; release runs them in reverse, at Finalize or
// when a later stage fails.
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
	for _, s := range []stage{
		{"exchange", j.exchangeStage},
		{"routes", j.routesStage},
		{"providers", j.providersStage},
		{"control", j.controlStage},
	} {
		closer, err := s.run(ctx)
		if closer != nil {
			j.closers = append(j.closers, closer)
		}
		if err != nil {
			j.log.Debug("start-up stage failed", "stage", s.name, "err", err)
			return nil, err
		}
	}
	return j.p, nil
}

// release undoes the stages that ran, last first; Finalize calls it
// (core.Config.Release), and Join when a stage fails.
func (j *joiner) release() error {
	if !j.closed.CompareAndSwap(false, true) {
		return nil
	}
	var err error
	for i := len(j.closers) - 1; i >= 0; i-- {
		err = errors.Join(err, j.closers[i]())
	}
	return err
}

// leaving is core.Config.Leaving: this PE's Finalize has completed its
// operations, so peers tearing down are departures, not failures, to the
// TCP node, and gossip no longer decides failures (control.watchGossip).
func (j *joiner) leaving() {
	j.ctl.finalizing.Store(true)
	j.node.Leaving()
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
