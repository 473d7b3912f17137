// Package simnet is the simulator's network: data paths, an engine and bells
// for a world of PEs in one process that hold writes in flight (Lazy
// delivery or a cost model's arrival times), run the PEs one at a time in an
// order a seeded scheduler picks, kill PEs on request, and keep virtual
// clocks. The sim package plugs it into pe.LocalWorld through pe.Net; the
// PE code above the paths does not know it is simulated.
//
// Every decision (which PE runs next, which write lands when) comes from one
// random source seeded by Config.Seed, and PEs switch only inside calls on
// a path, the engine or the bell, so a world replays exactly as long as its
// PEs call goshmem from one goroutine each and do not look at real time.
package simnet

import (
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goshmem/shmem/internal/lag"
	"github.com/goshmem/shmem/transport"
)

// Mode says when a write lands.
type Mode uint8

const (
	// Eager applies every write when it is issued (without a model).
	Eager Mode = iota
	// Lazy holds puts, non-fetching atomics, signals and NBI gets in flight
	// and lands them at moments the OpenSHMEM memory model allows.
	Lazy
)

// Config describes a simulated network.
type Config struct {
	NPEs int
	Mode Mode
	Seed uint64
	// FailAfter maps a rank to the number of goshmem calls it completes
	// before it dies (its next call does not return); 0 kills it at its
	// first call.
	FailAfter map[int]int
	// Slow maps a rank to a factor > 1: with a model its overheads, gaps
	// and wake-ups cost that much more; without one it is picked to run
	// that much less often.
	Slow map[int]float64
	// Down lists lost links (unordered pairs of ranks): their traffic is
	// relayed through a third PE, as the process backends do, which with
	// a model costs a second hop.
	Down [][2]int
	// Model, if set, gives every PE a virtual clock and lands each write
	// at its modeled arrival.
	Model *Model
	// NodeOf says which node a rank is on (nil: one node); with a model it
	// picks a link's intra- or inter-node parameters.
	NodeOf func(rank int) int
	// Kill reports a PE that FailAfter killed to the rest of the world
	// (LocalWorld.Fail); it runs before any other PE runs again.
	Kill func(rank int, reason string)
	// Deadlock ends the world when no PE can progress (LocalWorld
	// .Deadlock): every PE still running waits, nothing is in flight and
	// a round of peer checks changed nothing, and then nothing changed
	// for Grace. ended says which PEs have ended. Without it the lowest
	// waiting PE dies reporting it.
	Deadlock func(ended func(rank int) bool)
	// Grace is how long the world must stand still as Deadlock says
	// before it is called (sim.WithDeadlockGrace): the scheduler does not
	// see a goroutine of a PE that runs its own code (a computation, a
	// sleep) while the PE's other goroutines are blocked, and that
	// goroutine has Grace from its last call to call again. The control
	// plane's goroutines (a GlobalExit's, a failure's notices) may ring a
	// bell meanwhile too. 0 means DefaultGrace; a negative Grace declares
	// no deadlock: such a world waits for good.
	Grace time.Duration
	// Control, if set, returns a number that changes whenever the
	// control plane moves (LocalWorld.Moves): a round of peer checks
	// waits until it stands still (an agreement under way may still
	// complete).
	Control func() uint64
	// Trace, if set, receives one line per scheduling decision and
	// delivery: the same seed writes the same trace.
	Trace io.Writer
	// Unscheduled makes a network whose PEs never run under the scheduler
	// (nobody calls Start): any goroutine may call any PE's paths, engine
	// and bell, and every call runs at once on its caller's goroutine, in
	// no replayable order. Writes still go in flight as Mode and Model say
	// and land as the memory model allows: a few calls later (Lazy), at
	// the sender's Quiet, as a blocking read of the sender allows, and, in
	// fence order, while their target waits on its bell (what a network
	// delivers while nobody else calls). It serves the Path conformance
	// suite (transport/pathtest), whose callers are plain goroutines.
	Unscheduled bool
}

// Net is one world's simulated network. Its methods implement pe.Net.
type Net struct {
	mu  sync.Mutex
	cfg Config
	rng *rand.Rand
	pes []*pe

	// scheduler
	started  int
	holder   *pe
	ready    []*pe
	outside  int
	returned []*pe
	rounds   map[roundKey]*round // agreements PEs are outside in
	steps    uint64
	// scheduling is set while schedule runs: a write it lands wakes its
	// target without a nested schedule.
	scheduling bool
	// stall, while every PE waits, reports a deadlock unless the control
	// plane rings a bell first.
	stall *time.Timer
	// lag says whether the process fell behind while the world stood
	// still (armDeadlock); made at the first arming, for the grace.
	lag *lag.Lag
	// meanDelay is the mean number of scheduling steps a write stays in
	// flight in Lazy mode; the seed picks it, so different seeds explore
	// both "everything lands at once" and "nothing lands until forced".
	meanDelay float64
	// woken is the PE a landing last made ready: it runs next with high
	// probability, as a PE polling its flag would notice it at once.
	woken *pe
	// progress counts what can end a wait (a PE woken by a write, back
	// from an agreement, ended); checked is its value at the last round
	// of peer checks, which runs once per still spell (see checkRound).
	progress, checked uint64
	// stirs counts the calls of goroutines the scheduler did not count
	// on (made while the rest of their PE was blocked: unblock) and their
	// returns to their own code (leave); the real-time deadlock detector
	// reads it without n.mu (Stirs).
	stirs atomic.Uint64

	// quieting counts the PEs in Quiet that yielded for their writes to
	// come due (quiet): they are ready but have nothing to do.
	quieting int

	inflight opHeap // writes and NBI gets issued and not landed
	opSeq    uint64

	down  map[[2]int]bool
	stats stats
	calls map[callKey]*Call // team operations (calls.go)
	polls int               // polls with nothing in flight since a polling PE's last check round (bell.Poll)
}

// New returns the network cfg describes.
func New(cfg Config) *Net {
	n := &Net{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)), rounds: map[roundKey]*round{}}
	n.meanDelay = [...]float64{0.5, 3, 10, 40}[n.rng.IntN(4)]
	// A world of no PEs or fewer is the world's to refuse (core's Init
	// error), after the network is made.
	n.pes = make([]*pe, max(cfg.NPEs, 0))
	for r := range n.pes {
		p := &pe{rank: r, n: n, failAt: -1, slow: 1}
		if k, ok := cfg.FailAfter[r]; ok {
			p.failAt = k
		}
		if f := cfg.Slow[r]; f > 1 {
			p.slow = f
		}
		p.cond.L = &n.mu
		p.eng = engine{n: n, p: p}
		n.pes[r] = p
	}
	if m := cfg.Model; m != nil && m.Cores > 0 {
		perNode := map[int]int{}
		for r := range n.pes {
			perNode[n.node(r)]++
		}
		for r, p := range n.pes {
			if f := float64(perNode[n.node(r)]) / float64(m.Cores); f > 1 {
				p.crowd = (f - 1) * m.Intra.Slice
			}
		}
	}
	if len(cfg.Down) > 0 {
		n.down = map[[2]int]bool{}
		for _, l := range cfg.Down {
			n.down[[2]int{min(l[0], l[1]), max(l[0], l[1])}] = true
		}
	}
	n.stats.init(cfg.NPEs)
	return n
}

func (n *Net) node(rank int) int {
	if n.cfg.NodeOf == nil {
		return 0
	}
	return n.cfg.NodeOf(rank)
}

// Seed returns the seed the network runs with.
func (n *Net) Seed() uint64 { return n.cfg.Seed }

// Bell wraps PE rank's bell, whose heap is mem (core.Net).
func (n *Net) Bell(rank int, b transport.Bell, mem []byte) transport.Bell {
	n.pes[rank].inner = b
	n.pes[rank].mem = mem
	return &bell{n: n, p: n.pes[rank]}
}

// Path returns the simulated path from PE from to PE to (core.Net). It is
// made on first use and kept: a PE holds paths only to the peers it
// reached, about log2 n in a collective, not n.
func (n *Net) Path(from, to int, mappable bool) transport.Path {
	p := n.pes[from]
	n.mu.Lock()
	defer n.mu.Unlock()
	pa := p.paths[int32(to)]
	if pa == nil {
		if p.paths == nil {
			p.paths = map[int32]*path{}
		}
		pa = &path{p: p, to: int32(to), size: uint64(len(n.pes[to].mem)), mappable: mappable, eng: &p.eng}
		p.paths[int32(to)] = pa
	}
	return pa
}

// Block is called before PE rank blocks in a control-plane agreement,
// round seq of domain among members PEs: the others run meanwhile
// (pe.Net). The calling goroutine counts as outside until it resumes; the
// PE gives the baton up if it holds it and no other goroutine of it wants
// it.
func (n *Net) Block(rank int, domain string, seq uint64, members int) (resume func()) {
	p := n.pes[rank]
	n.mu.Lock()
	if p.st == stIdle || p.st == stDone {
		n.mu.Unlock()
		return func() {}
	}
	n.tracef("outside %d", rank)
	p.outside++
	n.outside++
	k := roundKey{domain, seq}
	r := n.enterRound(p, k, members)
	if n.holder == p && !p.othersWant() {
		p.st = stBlocked
		n.holder = nil
		n.schedule()
	}
	n.mu.Unlock()
	return func() {
		n.mu.Lock()
		defer n.mu.Unlock()
		n.leaveRound(p, r, k)
		if p.st == stDone {
			return // ended meanwhile: Exit took p's goroutines off the outside count
		}
		p.outside--
		n.outside--
		n.progress++
		if p.st == stBlocked {
			// Back to a PE whose other goroutines (if any) are blocked:
			// it rejoins with the others back from agreements. A PE
			// that is ready or running takes the caller along.
			p.st = stReturned
			n.returned = append(n.returned, p)
		}
		if n.holder == nil && (n.outside == 0 || len(n.ready) == 0) {
			n.schedule()
		}
		n.waitTurn(p)
		n.leave(p)
	}
}

// Abort is what a PE's goroutine panics with when the simulator ends it:
// killed by Config.FailAfter, or chosen to report a deadlock. The world
// has been told (Config.Kill); the sim package's runner recovers it.
type Abort struct {
	Rank   int
	Reason string
}

func (a *Abort) Error() string { return fmt.Sprintf("PE %d: %s", a.Rank, a.Reason) }

func (n *Net) tracef(format string, args ...any) {
	if n.cfg.Trace != nil {
		fmt.Fprintf(n.cfg.Trace, "%d "+format+"\n", append([]any{n.steps}, args...)...)
	}
}
