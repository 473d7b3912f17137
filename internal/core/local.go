package core

import (
	"crypto/rand"
	"encoding/binary"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/goshmem/shmem/actors"
	"github.com/goshmem/shmem/heap"
	"github.com/goshmem/shmem/internal/actorsys"
	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
	"github.com/goshmem/shmem/transport/udma"
)

// LocalConfig describes a world whose PEs all live in this process.
type LocalConfig struct {
	NPEs int
	// HeapSize is each PE's symmetric heap in bytes.
	HeapSize int
	// HeapLimit is the size each heap may grow to, a segment at a time,
	// when a collective allocation does not fit; at most HeapSize (the
	// default) means no growth.
	HeapLimit int
	// NodeOf returns the node of a rank; PEs on one node form TeamShared
	// and reach each other with Ptr. Nil puts every PE on one node.
	NodeOf func(rank int) int
	// Timeout bounds control-plane agreements (see Config.Timeout).
	Timeout time.Duration
	Logger  *slog.Logger
	// CloseWithLastPE makes the last PE to finalize close the world, for
	// callers (Init) that have no later moment to call Close.
	CloseWithLastPE bool
	// OpTimeout, if positive, bounds every blocking call (WithOpTimeout).
	OpTimeout time.Duration
	// Metrics turns on every PE's metrics (Config.Metrics); PathKind is
	// the kind they give every path (PathSim, the zero value, for the
	// simulator).
	Metrics  bool
	PathKind PathKind
	// DeadlockGrace, if positive, runs the deadlock detector (see
	// detector) with that grace period; the caller reports PEs whose code
	// ended with Done.
	DeadlockGrace time.Duration
	// OnFailure, if set, returns the Config.OnFailure of rank's PE: tests
	// of failure handling plug a backend's in (the simulator has none).
	OnFailure func(rank int) func(failed int, reason string, origin int, link bool)
	// Net, if set, wraps the bells and paths (the simulator's network).
	Net Net
}

// LocalWorld is a world of PEs in one process: each PE's heap is a private
// mapping of this process, and every path is a load/store into it.
type LocalWorld struct {
	PEs     []*PE
	system  *actor.ActorSystem
	coord   *actor.PID
	regions []*heap.Region
	det     *detector
	// coordMsgs counts twice each message the coordinator handles: once
	// when it starts, once when it is done, so it is odd while one is.
	coordMsgs atomic.Uint64
	// pathsMade counts the udma paths the world's PEs hold (without a
	// simulated network): n² in a small world, those used in a large one.
	pathsMade atomic.Int64
}

// PathsMade returns how many data paths the world has made so far (its
// own mapped-memory paths; a simulated network's are its own to count).
func (w *LocalWorld) PathsMade() int64 { return w.pathsMade.Load() }

// NewLocalWorld builds the PEs of cfg. Close releases what they share once
// every PE has finalized or been abandoned.
func NewLocalWorld(cfg LocalConfig) (*LocalWorld, error) {
	const op = "Init"
	if cfg.NPEs < 1 || cfg.HeapSize < 1 {
		return nil, errs.New(op, errs.NoPE, errs.NoPE, errs.ErrInvalidArgument, "%d PEs with %d-byte heaps", cfg.NPEs, cfg.HeapSize)
	}
	nodeOf := cfg.NodeOf
	if nodeOf == nil {
		nodeOf = func(int) int { return 0 }
	}
	w := &LocalWorld{system: actorsys.NewSystem(cfg.Logger)}
	// The deadlock detector counts the coordinator's messages: an
	// agreement under way is progress even while every PE waits in it.
	props := actorsys.NewCoordinator(func() int { return cfg.NPEs }).Configure(actor.WithReceiverMiddleware(
		func(next actor.ReceiverFunc) actor.ReceiverFunc {
			return func(c actor.ReceiverContext, env *actor.MessageEnvelope) {
				w.coordMsgs.Add(1) // odd while a message is handled
				next(c, env)
				w.coordMsgs.Add(1)
			}
		}))
	w.coord = w.system.Root.Spawn(props)
	n := cfg.NPEs
	heaps := make([]*heap.Heap, n)
	bells := make([]transport.Bell, n)
	peers := make([]*actor.PID, n)
	for r := 0; r < n; r++ {
		reg, err := heap.ReserveRegion(cfg.HeapSize, max(cfg.HeapLimit, cfg.HeapSize))
		if err != nil {
			w.Close()
			return nil, errs.New(op, r, errs.NoPE, errs.ErrOutOfMemory, "%v", err)
		}
		w.regions = append(w.regions, reg)
		heaps[r] = heap.NewGrowable(reg.Bytes(), int64(cfg.HeapSize))
		bells[r] = transport.NewLocalBell()
		if cfg.Net != nil {
			bells[r] = cfg.Net.Bell(r, bells[r], heaps[r].Bytes())
		}
		peers[r] = w.system.NewLocalPID(PEActor(r))
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	worldID := binary.LittleEndian.Uint64(id[:]) | 1 // never 0, the zero Sym's world
	var open atomic.Int32
	open.Store(int32(n))
	release := func() error {
		if open.Add(-1) == 0 && cfg.CloseWithLastPE {
			return w.Close()
		}
		return nil
	}
	kinds := sameKinds(n, cfg.PathKind) // read-only, shared by every PE
	world := make([]int, n)             // TeamWorld's members, shared likewise
	for r := range world {
		world[r] = r
	}
	for r := 0; r < n; r++ {
		reg := w.regions[r]
		var shared []int
		for q := 0; q < n; q++ {
			if nodeOf(q) == nodeOf(r) {
				shared = append(shared, q)
			}
		}
		var paths []transport.Path
		var pathTo func(int) transport.Path
		fence := new(atomic.Uint64)
		newPath := func(q int) *udma.Path {
			return udma.NewPath(heaps[q].Bytes(), bells[q], fence, nodeOf(q) == nodeOf(r))
		}
		switch {
		case cfg.Net != nil:
			// The network makes each path on first use.
			pathTo = func(q int) transport.Path { return cfg.Net.Path(r, q, nodeOf(q) == nodeOf(r)) }
		case n > tablePathsMax:
			pathTo = newLazyPaths(n, newPath, &w.pathsMade).path
		default:
			paths = make([]transport.Path, n)
			for q := range paths {
				paths[q] = newPath(q)
			}
			w.pathsMade.Add(int64(n))
		}
		var onFailure func(int, string, int, bool)
		if cfg.OnFailure != nil {
			onFailure = cfg.OnFailure(r)
		}
		p, err := Start(Config{
			Rank: r, NPEs: n, WorldID: worldID, Heap: heaps[r], Bell: bells[r], Paths: paths, PathTo: pathTo, World: world,
			Shared: shared, System: w.system, Coordinator: w.coord, Send: w.send(peers),
			Timeout: cfg.Timeout, Logger: cfg.Logger, Release: release, OnFailure: onFailure,
			Block: blockOf(cfg.Net, r), TeamOp: teamOpOf(cfg.Net, r),
			Grow:    func(size int64) error { return reg.Grow(int(size)) },
			Metrics: cfg.Metrics, PathKinds: kinds,
		})
		if err != nil {
			w.Close()
			return nil, err
		}
		p.SetOpTimeout(cfg.OpTimeout)
		w.PEs = append(w.PEs, p)
	}
	if cfg.DeadlockGrace > 0 {
		held, _ := cfg.Net.(WritesHeld)
		stirred, _ := cfg.Net.(Stirred)
		w.startDetector(cfg.DeadlockGrace, held, stirred)
	}
	return w, nil
}

// Fail tells every PE of the world that rank failed, as a failure detector
// would. The coordinator aborts the agreements rank was part of.
func (w *LocalWorld) Fail(rank int, reason string) {
	// The coordinator shares this process's actor system: the notice goes
	// as it is, no envelope.
	w.system.Root.Send(w.coord, &actors.PEFailed{Rank: rank, Reason: reason})
	w.Done(rank)
	for _, p := range w.PEs {
		if p.MyPE() != rank {
			p.NotifyFailed(rank, reason)
		}
	}
}

// send returns the Config.Send of the world's PEs: the PEs share one
// actor system, so a notice goes to the peer's mailbox as it is.
func (w *LocalWorld) send(peers []*actor.PID) func(int, any) bool {
	root := w.system.Root
	return func(rank int, msg any) bool {
		if rank < 0 || rank >= len(peers) {
			return false
		}
		root.Send(peers[rank], msg)
		return true
	}
}

// Close finalizes any PE that has not finalized (without the collective
// barrier), stops the actors and unmaps every heap. No PE may be used after.
func (w *LocalWorld) Close() error {
	var err error
	if w.det != nil {
		w.det.close()
		w.det = nil
	}
	for _, p := range w.PEs {
		p.s.finalized.Store(true)
		p.s.raise()
		p.s.changed()
	}
	if w.system != nil {
		for _, p := range w.PEs {
			if p.s.pePID != nil {
				_ = w.system.Root.StopFuture(p.s.pePID).Wait()
			}
		}
		if w.coord != nil {
			_ = w.system.Root.StopFuture(w.coord).Wait()
		}
		w.system.Shutdown()
		w.system = nil
	}
	for _, r := range w.regions {
		err = errs.Join(err, r.Close())
	}
	w.regions = nil
	return err
}

func loggerOr(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}

func teamOpOf(n Net, rank int) func(string, uint64, string, bool) {
	if n == nil {
		return nil
	}
	return func(team string, seq uint64, op string, end bool) { n.TeamOp(rank, team, seq, op, end) }
}

func blockOf(n Net, rank int) func(string, uint64, int) func() {
	if n == nil {
		return nil
	}
	return func(domain string, seq uint64, members int) func() { return n.Block(rank, domain, seq, members) }
}
