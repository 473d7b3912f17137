// Package core is the PE runtime: one member of a live world, with its
// symmetric heap, a data path to every peer, waits, the lifecycle (Finalize,
// GlobalExit, contexts), and the drivers of its actors (package pe's PE
// actor, package heap's heap actor; teams drive theirs in internal/coll).
// The root package shmem is the typed, checked facade over it; backends
// (the simulator, the launcher and unique-ID start-up, gossip) build PEs
// with Start, or NewLocalWorld for a world in one process.
package core

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/goshmem/shmem/heap"
	"github.com/goshmem/shmem/internal/coll"
	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/pe"
	"github.com/goshmem/shmem/transport"
	"github.com/goshmem/shmem/transport/udma"
)

// Config is everything a backend hands to Start. Every field is required
// unless it says otherwise.
type Config struct {
	Rank, NPEs int
	// WorldID names the world; it is the same on every PE and differs
	// between worlds, so a Sym from another world is rejected.
	WorldID uint64
	// Heap is this PE's symmetric heap, empty (no allocations yet).
	Heap *heap.Heap
	// Grow makes the first size bytes of Heap usable: a further segment,
	// mapped wherever a peer or the network reaches the heap. The heap
	// actor asks for it before it proposes an allocation that needs it, so
	// once the allocation is agreed every PE's memory is there. Required
	// when Heap can grow (Limit > Size); the heap does not shrink.
	Grow func(size int64) error
	// Grown, if set, runs once an allocation that grew every PE's heap to
	// size is agreed, before the allocation returns: where this PE maps
	// its peers' heaps (shared memory), it maps their new segments now,
	// since each peer grew its own before the agreement. A peer it cannot
	// map must be reported failed (NotifyFailed), never reached.
	Grown func(size int64)
	// Bell is rung when this PE's heap changes; waits sleep on it.
	Bell transport.Bell
	// Paths holds the data path to every PE, this one included, by rank.
	Paths []transport.Path
	// World, if set, is the list 0, 1, ..., NPEs-1 (TeamWorld's members),
	// which the PE keeps and never changes: the PEs of a LocalWorld share
	// one instead of n copies of n ranks.
	World []int
	// PathTo, if set instead of Paths, returns the path to a PE at each
	// call: the simulator's network, and a LocalWorld of more than
	// tablePathsMax PEs, make their paths on first use, since n tables of
	// n paths do not fit a world of 16384 PEs (8 GiB). Its paths' errors
	// are not settled (settle.go): these paths never fail.
	PathTo func(rank int) transport.Path
	// Shared lists the world ranks whose heaps Ptr reaches (TeamShared),
	// ascending, this PE included.
	Shared []int
	// System is the actor system this PE's actors run on. Start spawns
	// "pe-<rank>" on it (PEActor names it).
	System *actor.ActorSystem
	// Coordinator is the world's gather coordinator (actors.Coordinator).
	Coordinator *actor.PID
	// Send delivers msg (an *actors.GlobalExit or *actors.PEFailed, as a
	// Go value) to the PE actor of world rank, this PE's own included,
	// and reports whether it went: GlobalExit's fan-out and rank 0's relay
	// of it. How it travels is the backend's business (a local mailbox,
	// the remote layer's envelope, a control lane). It must not block; a
	// backend whose transport shuts down at Release drops messages from
	// then on.
	Send func(rank int, msg any) bool
	// Timeout bounds each control-plane agreement (allocation, team
	// creation). Default 10 minutes: long enough for a PE that computes
	// before its next collective call, while failures end waits sooner.
	Timeout time.Duration
	// Spin is how long a wait polls its condition before it sleeps on the
	// bell, and again after every wake-up. While a waiter polls it is not
	// armed, so writers skip the wake-up: a burst of puts into a waiting
	// PE costs one wake, not one per put. Worth it where a wake is a
	// syscall (processes: 20 µs); in one process parking is cheap and
	// many goroutines share few cores, so the default 0 polls only a few
	// times. The poll yields the CPU, to goroutines and to processes.
	Spin time.Duration
	// SocketWriters says that goroutines reading sockets (the rdma
	// server) write this PE's heap, so its waits must keep a thread in
	// the runtime's network poller (see pollerKick). Default false: in
	// one process every writer is a PE goroutine.
	SocketWriters bool
	// Logger receives the PE's log; nil discards.
	Logger *slog.Logger
	// OnGlobalExit, if set, runs once when any PE (origin) calls
	// GlobalExit and must end the process with the status (the launcher's
	// backend does); from then on no call of this PE returns: each blocks
	// until it does.
	OnGlobalExit func(origin, status int)
	// OnFailure, if set, runs once per failed rank, when this PE first
	// records the failure: from NotifyFailed (origin is this PE) or from a
	// PEFailed notice (origin is the PE that detected it). It runs on the
	// recording goroutine (the PE actor's, or a detector's) and must not
	// block; the multi-process backend fails its data paths to rank and
	// forwards the notice to PEs that may not have heard (world.control),
	// link included (actors.PEFailed.Link). Optional.
	OnFailure func(rank int, reason string, origin int, link bool)
	// OnPeerLeft, if set, runs on the PE actor's goroutine for each
	// PeerLeft it receives, after the notices that arrived before it were
	// recorded; the multi-process backend fails its data paths to rank
	// there (a provider may never complete what was in flight to a PE
	// that closed its endpoint). It must not block. Optional.
	OnPeerLeft func(rank int)
	// OnFinalizedEarly, if set, runs when an operation of this PE fails
	// because PE rank called Finalize while this PE waited for it: in a
	// collective (coll.Team.CheckPeers), or for a lock rank holds. It runs
	// on the waiting goroutine; the multi-process backend tells its
	// launcher, which then names rank as the job's cause. It must not
	// block. Optional.
	OnFinalizedEarly func(rank int)
	// Leaving, if set, runs when this PE's Finalize has completed its
	// operations and publishes its departure: the peers that finalize
	// first tear down their connections from now on, which the backend
	// must not log as failures (a real failure still reaches Finalize
	// through OnFailure). Optional.
	Leaving func()
	// Finalized, if set, runs when this PE's Finalize has completed with
	// every PE's (the world ended as its program meant), before the
	// release; the multi-process backend tells its launcher. Optional.
	Finalized func()
	// Release frees what the backend allocated for this PE (engines,
	// mappings, the actor system if it is the PE's own); Finalize calls it
	// last. Optional.
	Release func() error
	// Block, if set, is called before the PE blocks in a control-plane
	// agreement, and what it returns when the PE runs on (see Net).
	Block func(domain string, seq uint64, members int) (resume func())
	// TeamOp, if set, hears when each team operation of the PE starts
	// and returns (see coll.OpTimer): the simulator times them.
	TeamOp func(team string, seq uint64, op string, end bool)
	// Metrics turns on the PE's metrics (meter.go): its operations are
	// counted per kind and path kind, one in SampleEvery timed. Off, the
	// hot path is unchanged. Optional.
	Metrics bool
	// PathKinds gives the kind of each path in Paths for the metrics; nil
	// means shared memory for the ranks in Shared and TCP for the others.
	PathKinds []PathKind
	// Statics is this PE's statics region (transport.StaticsBase), which
	// StaticsPath reaches: the backend's network node serves it to the
	// peers (TCP), or its fabric node registers it for them. Optional.
	Statics []byte
}

// PE is one processing element, or a context on one (CreateCtx). Its
// methods are safe for concurrent use by the goroutines of the PE, except
// that collective calls must come in the same order on every PE.
type PE struct {
	s         *state
	isCtx     bool
	destroyed atomic.Bool
	// paths and engines are what this PE's operations go through: the
	// world's for the PE itself, a context's own streams' otherwise (see
	// ctx.go). A team context's paths are in team order.
	paths   []transport.Path
	engines []transport.Engine
	ctx     *ctxInfo    // nil for the PE itself
	mblock  *meterBlock // this handle's metrics and the counts its operations
	counts  *Counts     // bump; nil without (meter.go)
	// npes is the number of PEs paths reaches (len(paths) unless the
	// world's paths come from Config.PathTo, when paths is nil).
	npes int
	// mapped points to the state's *mappedTable for the PE itself, to a
	// word that stays nil for a context, which takes the checked way (see
	// Mapped).
	mapped *unsafe.Pointer
	// quietFree is the state's quietFree for the PE itself without
	// metrics; for a context, or with metrics, a word that stays 0 (see
	// QuietWord).
	quietFree *uint32
}

// state is what a PE and its contexts share.
type state struct {
	cfg     Config
	log     *slog.Logger
	paths   []transport.Path
	engines []transport.Engine // distinct engines of paths, Quieted in order
	local   []byte
	bell    transport.Bell
	statics transport.Path // the path to this PE's own statics region, nil without one
	kick    *pollerKick    // nil without SocketWriters
	tests   testLoop       // a Test loop's pace (Missed)
	checks  PeerChecker    // the bell's, under a simulated network

	finalized atomic.Bool
	// inWait counts the waits (waitSlow) of the PE and its contexts
	// under way: they read the heap until they see the Finalize, which
	// must not release the heap before they have left (Finalize).
	inWait atomic.Int32

	pctl  atomic.Int32 // the Pcontrol level, read by the log's gate
	ctxMu sync.Mutex
	ctxs  map[*PE]struct{} // contexts not destroyed, which Finalize completes
	// agreed: every PE has reached Finalize (its agreement completed), so
	// a peer that disappears from now on has left, not failed.
	agreed atomic.Bool
	// coordLeft: the PE whose process runs the world's coordinator
	// (coordinatorPE) has left the world (PeerLeft): no agreement this PE
	// has not been answered yet will be (see AgreeChecked).
	coordLeft atomic.Bool
	// finResult is the outcome of this PE's Finalize once it has
	// returned, which a later call returns again.
	finResult atomic.Pointer[finalizeResult]
	// exited, nFailed and failed publish the PE actor's state to the hot
	// path; only the actor's effects (apply) write them.
	exited atomic.Pointer[exitInfo]
	// unsettled is non-zero once finalized, exited or any failed rank is
	// set (raise): the hot path's one load while none is, so an operation
	// in the common case reads a single word of PE state (see Path).
	unsettled atomic.Uint32
	// quietFree: every engine of the PE is transport.Immediate (all its
	// peers are mapped), so Quiet has nothing to do, and unsettled is 0
	// (raise clears it), so Quiet has nothing to report either.
	quietFree uint32 // read and written atomically (a bool: 0 or 1)
	// mapped is the *mappedTable of the world's mapped paths (Mapped), nil
	// when there is none; raise clears it with unsettled. Read and
	// written atomically.
	mapped unsafe.Pointer
	// exitKnown is closed when exited is set: settle waits on it, at
	// most exitGrace (the constant; a test may lengthen it).
	exitKnown chan struct{}
	exitGrace time.Duration
	nFailed   atomic.Int32
	failed    failedSet // reason by rank (failed.go)
	// failureCalls runs the handler SetFailureHandler set.
	failureCalls failureCalls
	// firstFailed is 1 + the rank recorded failed first, 0 before any:
	// the PE a wait names when several failed, since the later ones are
	// often PEs that ended because of it.
	firstFailed atomic.Int32
	actor       peActor
	blocks      blocks
	wake        notices // wakes agreement waiters (notice.go)
	// agreeSleeps, set by tests before the PE is used, hears every sleep
	// an agreement's wait arms after a look.
	agreeSleeps func(time.Duration)

	pePID *actor.PID
	heap  *heap.Actor // owns the allocator; driven under collMu

	collMu   sync.Mutex // serializes collective calls and their sequence numbers
	allocSeq uint64
	world    *coll.Team
	shared   *coll.Team
	pool     *coll.Pool
	meter    *meter // nil without Config.Metrics

	// held lists the heap offsets of the locks this PE holds (HoldLock,
	// DropLock), so that ClearLock can refuse a lock it does not hold:
	// the held word records only the last lock taken, and the lock word
	// itself does not say who holds it. A slice under a mutex, not a map:
	// a PE holds few locks at once, and the array is reused, so taking
	// and releasing a lock allocates nothing once warm.
	heldMu sync.Mutex
	held   []uint64
}

type exitInfo struct{ rank, status int }

// PEActor names the actor Start spawns for rank: where peers send notices.
func PEActor(rank int) string { return "pe-" + strconv.Itoa(rank) }

// Start makes the PE that cfg describes and spawns its actors.
func Start(cfg Config) (*PE, error) {
	const op = "Init"
	if cfg.NPEs < 1 || cfg.Rank < 0 || cfg.Rank >= cfg.NPEs || (len(cfg.Paths) != cfg.NPEs && (cfg.PathTo == nil || cfg.Paths != nil)) || cfg.Send == nil {
		return nil, errs.New(op, cfg.Rank, errs.NoPE, errs.ErrInvalidArgument,
			"rank %d of %d with %d paths (and a Send: %v)", cfg.Rank, cfg.NPEs, len(cfg.Paths), cfg.Send != nil)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Minute
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &state{
		cfg: cfg, log: log.With("pe", cfg.Rank),
		local: cfg.Heap.Bytes(), bell: cfg.Bell,
		actor: peActor{a: pe.New(cfg.Rank, cfg.NPEs)}, heap: heap.NewActor(cfg.Heap, cfg.Rank),
		exitKnown: make(chan struct{}), exitGrace: exitGrace,
	}
	s.blocks.made = time.Now()
	if len(cfg.Statics) > 0 {
		s.statics = udma.NewPath(cfg.Statics, cfg.Bell, new(atomic.Uint64), false)
	}
	// A network path's errors are settled against a GlobalExit under way
	// (settle); mapped memory does not fail.
	if cfg.Paths != nil {
		s.paths = make([]transport.Path, len(cfg.Paths))
		for r, path := range cfg.Paths {
			s.paths[r] = path
			if !slices.Contains(cfg.Shared, r) {
				s.paths[r] = settledPath{Path: path, s: s}
			}
		}
		s.cfg.Paths = nil // s.paths holds them: one table a PE, not two
	}
	s.checks, _ = cfg.Bell.(PeerChecker)
	if s.checks != nil {
		s.checks.OnCheck(s.wake.notify)
	}
	s.pctl.Store(1)
	s.log = slog.New(gate{s.log.Handler(), &s.pctl})
	if cfg.SocketWriters {
		s.kick = newPollerKick()
	}
	seen := map[transport.Engine]bool{}
	for _, p := range s.paths {
		if e := p.Engine(); !seen[e] {
			seen[e] = true
			s.engines = append(s.engines, e)
		}
	}
	if s.paths == nil {
		// A network's paths from one PE share its engine.
		s.engines = []transport.Engine{cfg.PathTo(cfg.Rank).Engine()}
	}
	immediate := true
	for _, e := range s.engines {
		if _, ok := e.(transport.Immediate); !ok {
			immediate = false
		}
	}
	if immediate {
		atomic.StoreUint32(&s.quietFree, 1)
	}
	s.tests.networked, s.tests.born = !immediate, time.Now()
	p := &PE{s: s, paths: s.paths, engines: s.engines, npes: cfg.NPEs, mapped: &s.mapped}
	if t := s.newMappedTable(); t != nil {
		s.mapped = unsafe.Pointer(t)
	}
	p.meter()
	p.quietFree = &s.quietFree
	if p.counts != nil {
		p.quietFree = new(uint32) // stays 0: a metered Quiet counts itself
	}
	// The team pool (TeamWorld's and TeamShared's slots, then those of
	// the teams splits create) comes first in every heap; every PE
	// reserves it the same way, so the offsets agree without a message.
	world := cfg.World
	if len(world) != cfg.NPEs {
		world = make([]int, cfg.NPEs)
		for i := range world {
			world[i] = i
		}
	}
	slots := coll.PoolSlots(cfg.NPEs, cfg.Heap.Size())
	base, err := p.reserve(int(int64(slots) * coll.SlotBytes(cfg.NPEs) / 8))
	if err != nil {
		return nil, errs.New(op, cfg.Rank, errs.NoPE, errs.ErrOutOfMemory,
			"a symmetric heap of %d bytes is too small for a world of %d PEs: give at least %d bytes (WithHeapSize or SHMEM_SYMMETRIC_SIZE)",
			cfg.Heap.Size(), cfg.NPEs, MinHeapSize(cfg.NPEs))
	}
	s.pool = coll.NewPool(base, cfg.NPEs, slots)
	if s.world, err = coll.NewRoot(p, "world", world, 0); err != nil {
		return nil, err
	}
	if s.shared, err = coll.NewRoot(p, "shared", append([]int(nil), cfg.Shared...), 1); err != nil {
		return nil, err
	}

	root := cfg.System.Root
	if s.pePID, err = root.SpawnNamed(actorProps(s), PEActor(cfg.Rank)); err != nil {
		return nil, errs.New(op, cfg.Rank, errs.NoPE, errs.ErrBootstrap, "spawning PE actor: %v", err)
	}
	return p, nil
}

// reserve allocates n zeroed 8-byte words for internal use without agreement.
// The heap is a fresh mapping, so the words are zero.
func (p *PE) reserve(n int) (uint64, error) {
	for _, e := range p.s.heap.Step(heap.Reserve{Req: heap.Request{Kind: heap.KindAlloc, Size: int64(8 * n), Align: heap.MinAlign}}) {
		if d, ok := e.(heap.Done); ok {
			if d.Err != nil {
				return 0, errs.New("Init", p.s.cfg.Rank, errs.NoPE, d.Err, "reserving team resources")
			}
			return uint64(d.Result.Off), nil
		}
	}
	return 0, errs.New("Init", p.s.cfg.Rank, errs.NoPE, errs.ErrBootstrap, "the heap actor made no reservation")
}

// TeamOp implements coll.OpTimer through Config.TeamOp.
func (p *PE) TeamOp(team string, seq uint64, op string, end bool) {
	if f := p.s.cfg.TeamOp; f != nil {
		f(team, seq, op, end)
	}
}

// TimesTeamOps implements coll.OpTimer: whether Config.TeamOp is set.
func (p *PE) TimesTeamOps() bool { return p.s.cfg.TeamOp != nil }

// MyPE returns this PE's rank in the world.
func (p *PE) MyPE() int { return p.s.cfg.Rank }

// NPEs returns the number of PEs in the world.
func (p *PE) NPEs() int { return p.s.cfg.NPEs }

// WorldID returns the identity of this PE's world.
func (p *PE) WorldID() uint64 { return p.s.cfg.WorldID }

// Heap returns this PE's symmetric heap.
func (p *PE) Heap() *heap.Heap { return p.s.cfg.Heap }

// Local returns this PE's own heap bytes.
func (p *PE) Local() []byte { return p.s.local }

// Logger returns the PE's logger.
func (p *PE) Logger() *slog.Logger { return p.s.log }

// TeamWorld returns the team of all PEs.
func (p *PE) TeamWorld() *coll.Team { return p.s.world }

// TeamShared returns the team of the PEs whose memory Ptr reaches.
func (p *PE) TeamShared() *coll.Team { return p.s.shared }

// TeamPool returns the PE's pool of team slots.
func (p *PE) TeamPool() *coll.Pool { return p.s.pool }

// FinalizedEarly passes on to Config.OnFinalizedEarly that an operation
// of this PE fails because PE pe called Finalize while it waited for it.
func (p *PE) FinalizedEarly(pe int) {
	if f := p.s.cfg.OnFinalizedEarly; f != nil {
		f(pe)
	}
}

// ActorRoot returns the root context of the PE's actor system, on which
// team actors run.
func (p *PE) ActorRoot() *actor.RootContext { return p.s.cfg.System.Root }

// Accessible reports whether pe is a live PE of this world that this PE
// can reach.
func (p *PE) Accessible(pe int) bool {
	return pe >= 0 && pe < p.npes && p.usable() == nil && (p.s.nFailed.Load() == 0 || p.s.failed.Load(p.worldRank(pe)) == nil)
}

// Path returns the data path to pe, checking that this PE is usable and pe
// is a live PE of the world; op names the caller's operation in errors.
// It is the hot path's only check of PE state. While nothing has happened
// to the world (no Finalize, exit or failure: unsettled is 0) that is one
// load of a word nobody writes, and the call inlines into its caller;
// otherwise checkedPath reads each state.
func (p *PE) Path(op string, pe int) (transport.Path, error) {
	if path := p.FastPath(pe); path != nil {
		return path, nil
	}
	return p.checkedPath(op, pe)
}

// FastPath is Path's common case alone, small enough to inline into the
// root package's operations: the path to pe when the world's paths are a
// table (not Config.PathTo's), pe is in range and nothing has happened to
// the world (see unsettled) nor to this PE handle (contexts always take
// the checked way), else nil: the caller must then call Path, which checks
// every state and names the error.
func (p *PE) FastPath(pe int) transport.Path {
	if uint(pe) < uint(len(p.paths)) && p.s.unsettled.Load() == 0 && !p.isCtx {
		return p.paths[pe]
	}
	return nil
}

// checkedPath is Path past its common case: every state, in order.
func (p *PE) checkedPath(op string, pe int) (transport.Path, error) {
	if uint(pe) >= uint(p.npes) {
		return nil, p.outOfRange(op, pe)
	}
	if err := p.usable(); err != nil {
		return nil, p.annotate(err, op, pe)
	}
	if p.ctx != nil && p.ctx.team.Gone() {
		// Its PE numbers are those of a team that no longer exists (the
		// spec destroys a team's contexts with it). Quiet, Fence and
		// Destroy, which address no PE, still complete its operations.
		return nil, errs.New(op, p.s.cfg.Rank, pe, errs.ErrInvalidArgument, "the context's team %s was destroyed", p.ctx.team.ID())
	}
	if p.s.nFailed.Load() != 0 {
		if r := p.s.failed.Load(p.worldRank(pe)); r != nil {
			return nil, errs.New(op, p.s.cfg.Rank, pe, errs.ErrPEFailed, "%s", *r)
		}
	}
	if p.paths == nil {
		return p.s.cfg.PathTo(pe), nil
	}
	return p.paths[pe], nil
}

// raise records in unsettled that finalized, exited or a failure has just
// been set, after the store, so that the hot path leaves its fast case and
// reads them.
func (s *state) raise() {
	s.unsettled.Store(1)
	atomic.StoreUint32(&s.quietFree, 0)
	atomic.StorePointer(&s.mapped, nil)
}

// path returns the world's path to world rank r.
func (s *state) path(r int) transport.Path {
	if s.paths == nil {
		return s.cfg.PathTo(r)
	}
	return s.paths[r]
}

// usable returns why this PE can no longer be used, or nil.
func (p *PE) usable() error {
	if p.s.finalized.Load() {
		return errs.ErrFinalized
	}
	if e := p.s.exited.Load(); e != nil {
		if p.s.cfg.OnGlobalExit != nil {
			// The handler ends the process with the exit's status (the C
			// behaviour): a call that returned now could end the program
			// first, with a status of its own.
			select {}
		}
		return &exitError{rank: e.rank, status: e.status}
	}
	if p.isCtx && p.destroyed.Load() {
		return errs.ErrInvalidArgument
	}
	return nil
}

func (p *PE) annotate(err error, op string, target int) error {
	switch err {
	case errs.ErrFinalized:
		return errs.New(op, p.s.cfg.Rank, target, errs.ErrFinalized, "called after Finalize")
	case errs.ErrInvalidArgument:
		if p.ctx != nil && p.ctx.team.Gone() {
			// Destroyed by its team's Destroy (DestroyTeamCtxs).
			return errs.New(op, p.s.cfg.Rank, target, errs.ErrInvalidArgument, "context was destroyed with its team %s", p.ctx.team.ID())
		}
		return errs.New(op, p.s.cfg.Rank, target, errs.ErrInvalidArgument, "context was destroyed")
	}
	return errs.New(op, p.s.cfg.Rank, target, err, "")
}

// Check returns nil when the PE can be used, else an error naming op.
// While nothing has happened to the world (unsettled is 0; see FastPath)
// that is one load, inlined into the caller; otherwise checked reads each
// state.
func (p *PE) Check(op string) error {
	if p.s.unsettled.Load() == 0 && !p.isCtx {
		return nil
	}
	return p.checked(op)
}

// checked is Check past its common case.
func (p *PE) checked(op string) error {
	if err := p.usable(); err != nil {
		return p.annotate(err, op, errs.NoPE)
	}
	return nil
}

// Backend makes one PE of a world that was built outside shmem.Init's own
// start-up (the simulator builds every PE of its world at once); Init
// wraps the PE it returns in the public handle.
type Backend func(ctx context.Context) (*PE, error)

// MinHeapSize is the smallest symmetric heap a PE of a world of npes PEs
// can start with: the team slots of TeamWorld and TeamShared, and as much
// again for the user's first objects and teams.
func MinHeapSize(npes int) int64 { return 4 * coll.SlotBytes(npes) }
