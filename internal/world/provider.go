package world

import (
	"time"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
	"github.com/goshmem/shmem/transport/rdma/fabric"
)

// The data-path providers between hosts (Config.Provider,
// SHMEM_RDMA_PROVIDER).
const (
	// ProviderTCP is package rdma's TCP transport, TLS 1.3 unless the
	// job turned TLS off: the default.
	ProviderTCP = "tcp"
	// ProviderFabric is package fabric's libfabric provider (RDMA NICs
	// through verbs, or libfabric's tcp and sockets providers). Its data is
	// not encrypted; it needs a build with -tags goshmem_fabric.
	ProviderFabric = "fabric"
)

// FabricConfig tunes the libfabric provider (Config.Provider
// ProviderFabric); every PE of the job must pick the same provider.
type FabricConfig struct {
	// Provider names the libfabric provider, e.g. "verbs;ofi_rxm" or
	// "tcp;ofi_rxm" (SHMEM_FABRIC_PROVIDER). Default "": the first that
	// offers reliable-datagram endpoints with RMA and atomics, which is
	// verbs on a host with an RDMA NIC (fabric.Config.Provider).
	Provider string
	// Domain picks the NIC or interface, e.g. "mlx5_0"
	// (SHMEM_FABRIC_DOMAIN). Default "": the provider's first.
	Domain string
	// Node is the local address to bind for providers that take one (tcp,
	// sockets), e.g. "10.0.0.5" (SHMEM_FABRIC_NODE). Default "": the
	// provider's choice.
	Node string
}

// fabricEndpoint is what the world uses of a fabric.Node; the build
// without the goshmem_fabric tag has none (fabric_stub.go).
type fabricEndpoint interface {
	Address() []byte
	Provider() string
	Connect(peers [][]byte) error
	GrowHeap(size int) error
	UpdatePeers(peers [][]byte) error
	Path(peer int) (transport.Path, error)
	PeerFailed(peer int)
	PeerLeft(peer int)
	OnRemoteWrite(ring func()) bool
	Close() error
}

// fabricPoll bounds each sleep of a waiting PE when fabric writes can
// change its heap without ringing its bell (a provider without remote-write
// events: verbs, tcp;ofi_rxm). The NIC writes memory behind the CPU's
// back, so the waiter must look again; RDMA OpenSHMEMs spin on memory
// instead, which costs a core per waiting PE. With the world's 200 µs
// spin after each wake-up a waiting PE uses about a sixth of a core, and
// sees a fabric write at most 1 ms late.
const fabricPoll = time.Millisecond

// pollingBell is a Bell whose waits end after at most every.
type pollingBell struct {
	transport.Bell
	every time.Duration
}

// Wait reports a ring when its own bound ended the sleep too: a fabric
// write may have landed unrung, so the waiter should poll as after a ring.
func (b pollingBell) Wait(armed uint32, timeout time.Duration) bool {
	return b.Bell.Wait(armed, min(timeout, b.every)) || timeout > b.every
}

// useFabric reports whether the configuration selects the fabric
// provider, and refuses what it cannot run with.
func (j *joiner) useFabric() (bool, error) {
	switch j.cfg.Provider {
	case "", ProviderTCP:
		return false, nil
	case ProviderFabric:
	default:
		return false, j.fail(errs.ErrInvalidArgument, "data-path provider %q: want %q or %q (SHMEM_RDMA_PROVIDER)",
			j.cfg.Provider, ProviderTCP, ProviderFabric)
	}
	if g := j.cfg.Gossip; g != nil && g.RankHint < 0 {
		// A gossip member learns its rank from the exchange, but the
		// fabric address must travel in the exchanged record and is made
		// by registering the heap, which is the /dev/shm segment that
		// same-host peers open by rank (udma.Create names it so). With a
		// launcher's rank (the hint) the node opens under that rank and
		// the exchange must confirm it (checkFabric). Without one it would
		// need a segment created under a provisional name and renamed, a
		// node whose rank can be set after Open (the address and errors
		// carry it), and peers taking the address's rank from the record.
		return false, j.fail(errs.ErrInvalidArgument, "the fabric provider with WithSeeds needs every PE's rank from a launcher (SHMEM_RANK, SLURM_PROCID, ...) before start-up; use a unique ID or a launcher otherwise")
	}
	return true, nil
}

// startFabric opens this PE's fabric node when the configuration selects
// it. The node registers the heap, so the heap's segment is created here,
// before the exchange, and the node's address travels in this PE's record.
// Their closers go on u.
func (j *joiner) startFabric(u *undo) error {
	on, err := j.useFabric()
	if !on || err != nil {
		return err
	}
	c := &j.cfg
	if c.Gossip != nil {
		c.Rank = c.Gossip.RankHint // provisional: the exchange must confirm it
	}
	if j.seg, err = j.createSegment(); err != nil {
		return j.fail(errs.ErrBootstrap, "creating the shared heap: %v", err)
	}
	u.add(closeSegment(j.seg))
	// The node registers the mapped part; the reservation beyond it, its
	// capacity, is what growOwn registers as the heap grows. It registers
	// the statics region too, so that peers it reaches reach that (a C
	// program's globals) as the network path would. Its endpoint binds a
	// port of SHMEM_PORT_RANGE (openFabricIn), or one the kernel chooses,
	// and never one the job binds later (openFabricAvoiding).
	if j.fab, err = openFabricIn(c.Ports, fabric.Config{
		Rank: c.Rank, NPEs: c.NPEs, Heap: j.seg.Reservation()[:c.HeapSize], Statics: c.Statics, Logger: j.log,
		Provider: c.Fabric.Provider, Domain: c.Fabric.Domain, Node: c.Fabric.Node,
	}, j.laterPorts(), openFabric); err != nil {
		return err
	}
	u.add(j.fab.Close) // before the heap it registered is unmapped
	// RDMA NICs have no TLS, and a registered heap is open to any process
	// on the fabric that presents its key: this is why the provider is
	// never a default. The control plane keeps its TLS.
	j.log.Warn("fabric data path: heap traffic between hosts is not encrypted and the heap is reachable by anyone on the fabric who learns its key; use it on a trusted network only (the control plane stays TLS)",
		"provider", j.fab.Provider())
	return nil
}

// checkFabric validates every peer's fabric address: every PE must have
// chosen the fabric provider or none, and the addresses are outside input,
// decoded and checked before any is used. Errors name the PE.
func (j *joiner) checkFabric(recs []record) error {
	if g := j.cfg.Gossip; j.fab != nil && g != nil && j.cfg.Rank != g.RankHint {
		// Gossip honours hints only when every member gives one and they
		// form a permutation; the node and heap were opened under the hint.
		return j.fail(errs.ErrInvalidArgument, "gossip assigned rank %d, not the launcher's rank %d: the fabric provider with WithSeeds needs every PE's rank from a launcher, and no two alike", j.cfg.Rank, g.RankHint)
	}
	for r, rec := range recs {
		switch {
		case j.fab == nil && rec.Fabric == nil:
			continue
		case j.fab == nil:
			return errs.New("Init", j.cfg.Rank, r, errs.ErrInvalidArgument,
				"PE %d uses the fabric provider, this PE the TCP one: every PE must set the same SHMEM_RDMA_PROVIDER", r)
		case rec.Fabric == nil:
			return errs.New("Init", j.cfg.Rank, r, errs.ErrInvalidArgument,
				"PE %d offers no fabric address (TCP provider, or an older goshmem): every PE must set SHMEM_RDMA_PROVIDER=fabric", r)
		}
		a, err := fabric.DecodeAddress(rec.Fabric)
		if err != nil {
			return errs.New("Init", j.cfg.Rank, r, errs.ErrBootstrap, "fabric address of PE %d: %v", r, err)
		}
		if a.Rank != r {
			return errs.New("Init", j.cfg.Rank, r, errs.ErrBootstrap, "fabric address of PE %d names rank %d", r, a.Rank)
		}
		if a.Provider != j.fab.Provider() {
			return errs.New("Init", j.cfg.Rank, r, errs.ErrBootstrap,
				"PE %d runs libfabric provider %q, this PE %q: set the same SHMEM_FABRIC_PROVIDER on every PE", r, a.Provider, j.fab.Provider())
		}
		if a.HeapSize < uint64(j.cfg.HeapSize) {
			return errs.New("Init", j.cfg.Rank, r, errs.ErrBootstrap,
				"fabric address of PE %d registers %d heap bytes, want %d", r, a.HeapSize, j.cfg.HeapSize)
		}
	}
	return nil
}

// connectFabric connects the fabric node to the PEs it carries data to:
// direct routes to PEs that do not share memory with this one.
func (j *joiner) connectFabric(recs []record, via [][]int) error {
	if j.fab == nil {
		return nil
	}
	addrs := make([][]byte, len(recs))
	for r, rec := range recs {
		if j.fabricPeer(r, rec, via) {
			addrs[r] = rec.Fabric
		}
	}
	if err := j.fab.Connect(addrs); err != nil {
		return j.fail(errs.ErrBootstrap, "fabric: %v", err)
	}
	return nil
}

func (j *joiner) fabricPeer(r int, rec record, via [][]int) bool {
	return j.fab != nil && r != j.cfg.Rank && via[j.cfg.Rank][r] == direct && !j.sameHost(rec)
}

// netPath is the direct network path to PE r: the fabric node's when it
// runs, else the TCP transport's.
func (j *joiner) netPath(r int, rec record) (transport.Path, error) {
	if j.fab == nil {
		return j.node.Path(r, rec.Data), nil
	}
	p, err := j.fab.Path(r)
	if err != nil {
		return nil, j.fail(errs.ErrBootstrap, "fabric: %v", err)
	}
	return p, nil
}

// waitBell is the bell this PE's waits sleep on. With a fabric node
// whose remote writes cannot ring it, each sleep is bounded (fabricPoll);
// with remote-write events a watcher rings it.
func (j *joiner) waitBell() transport.Bell {
	if j.fab == nil || j.fab.OnRemoteWrite(j.bell.Ring) {
		return j.bell
	}
	return pollingBell{Bell: j.bell, every: fabricPoll}
}

// dataNodes are the data-path nodes: each is told of a failed PE, and those
// that need it of a departed one.
type dataNodes []interface{ PeerFailed(peer int) }

func (f dataNodes) PeerFailed(peer int) {
	for _, n := range f {
		n.PeerFailed(peer)
	}
}

// PeerLeft tells the nodes whose provider may leave an operation to a
// departed peer pending (the fabric's); a TCP node's connection to it ends
// by itself, failing what waits on it.
func (f dataNodes) PeerLeft(peer int) {
	for _, n := range f {
		if l, ok := n.(interface{ PeerLeft(peer int) }); ok {
			l.PeerLeft(peer)
		}
	}
}

// dataNodes returns the nodes whose paths to a failed or departed PE must
// fail.
func (j *joiner) dataNodes() dataNodes {
	f := dataNodes{j.node}
	if j.fab != nil {
		f = append(f, j.fab)
	}
	return f
}
