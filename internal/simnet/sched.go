package simnet

import (
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goshmem/shmem/transport"
)

type status uint8

const (
	stIdle     status = iota // not started (the world is being built)
	stReady                  // may run; waits for the scheduler to pick it
	stRunning                // holds the baton: the only PE running
	stWaiting                // blocked on its bell until a write lands
	stOutside                // blocked in a control-plane agreement
	stReturned               // back from outside; rejoins at quiescence
	stDone                   // finished, or dead
)

// pe is the simulator's view of one PE.
type pe struct {
	n        *Net
	rank     int
	st       status
	cond     sync.Cond // signalled when this PE gets the baton; L is Net.mu
	inner    transport.Bell
	mem      []byte
	eng      engine
	readyIdx int

	ops      int // goshmem calls so far
	failAt   int // dies at call failAt+1; -1 never
	slow     float64
	crowd    float64 // a wake-up's extra cost on an oversubscribed node
	rung     bool    // a write landed since Arm
	deadlock bool    // picked to report that every PE waits for nothing
	// check: asked to check its peers (checkRound); atomic, as the PEs
	// in an agreement read it without the scheduler's lock.
	check atomic.Bool
	// wake wakes the PE's goroutines waiting in an agreement, outside
	// the schedule (core.PeerChecker.OnCheck), so that they look at
	// check; nil until the PE registers it.
	wake  func()
	paths map[int32]*path // made on first use (Net.Path)
	// waiting counts the goroutines blocked on this PE's bell in an
	// Unscheduled network: a write issued to it wakes them to land it.
	waiting int

	epoch uint32 // fences so far
	out   []*op  // issued, not landed, in issue order (writes and NBI gets)

	clock      float64 // virtual ns
	lastSend   float64
	lastArrive float64
	lastAck    float64 // when the ack of the last write is back
	sent       bool    // a write left since the last Quiet
	end        float64 // clock when its function returned
	ended      bool
	marks      []float64
}

// Start is called by PE rank's goroutine before it runs the user's
// function; the first PE runs once every PE has started, so the start
// order of goroutines does not matter.
func (n *Net) Start(rank int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	p := n.pes[rank]
	n.started++
	p.st = stReady
	n.addReady(p)
	if n.started == len(n.pes) {
		// Goroutines start in any order: list them by rank before the
		// first pick, which indexes this list.
		sort.Slice(n.ready, func(i, j int) bool { return n.ready[i].rank < n.ready[j].rank })
		for i, q := range n.ready {
			q.readyIdx = i
		}
		n.schedule()
	}
	n.waitTurn(p)
}

// Exit is called by PE rank's goroutine when it is done (finalized, or
// failed and reported).
func (n *Net) Exit(rank int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	p := n.pes[rank]
	n.dropOut(p)
	was := p.st
	p.st = stDone
	n.progress++
	// Other goroutines of p parked for its turn (on the bell, yielding)
	// would wait for a pick that no longer comes: they see stDone.
	p.cond.Broadcast()
	switch was {
	case stReady:
		n.removeReady(p)
	case stRunning:
		n.holder = nil
		n.schedule()
	case stOutside, stReturned:
		// p's goroutine in (or back from) an agreement must not rejoin:
		// picked, p would hold the baton with nobody to hand it on. Its
		// resume finds p done and returns. What waited for it to come
		// back (a rejoin, a check round) may go on now.
		if was == stOutside {
			n.outside--
		} else {
			n.returned = slices.DeleteFunc(n.returned, func(q *pe) bool { return q == p })
		}
		if n.holder == nil && !n.scheduling {
			n.schedule()
		}
	}
}

// Mark records PE rank's clock now, for Result.Marks.
func (n *Net) Mark(rank int) {
	n.mu.Lock()
	p := n.pes[rank]
	p.marks = append(p.marks, p.clock)
	n.mu.Unlock()
}

// Returned records that PE rank's function returned: its clock then is
// its time in Result (Finalize's closing barrier is not the program's).
func (n *Net) Returned(rank int) {
	n.mu.Lock()
	p := n.pes[rank]
	p.end, p.ended = p.clock, true
	n.mu.Unlock()
}

// enter is the scheduling point at the start of every call of PE p on a
// path or its engine; it reports whether p runs scheduled, holding the
// baton. A PE may have several goroutines: one that calls while another
// is parked for its turn waits for that turn too; one that calls while
// another waits on the bell or sits in an agreement, or while the world
// is being built, runs at once, unscheduled (replay does not hold for
// such PEs). In an Unscheduled network every call is a step that lands
// the Lazy writes whose delay has passed. enter may kill p (FailAfter),
// in which case it unlocks n.mu and panics.
func (n *Net) enter(p *pe) bool {
	if n.cfg.Unscheduled {
		n.steps++
		n.landSome()
		return false
	}
	if p.st == stReady {
		n.waitTurnOrAside(p)
	}
	if p.st != stRunning || n.holder != p {
		return false
	}
	p.ops++
	if p.failAt >= 0 && p.ops > p.failAt {
		n.kill(p)
	}
	n.yield(p)
	return true
}

// yield lets the scheduler pick who runs next, p included.
func (n *Net) yield(p *pe) {
	if n.cfg.Model != nil && n.keeps(p) {
		return
	}
	p.st = stReady
	n.addReady(p)
	n.holder = nil
	n.schedule()
	n.waitTurnOrAside(p)
}

// keeps reports whether, with a model, the scheduler would pick p again
// because its clock is still the earliest, after landing what it would
// land first; p then runs on without handing the baton over and back,
// which halves the goroutine switches of a large world. It makes exactly
// the decisions schedule would.
func (n *Net) keeps(p *pe) bool {
	for {
		earlier := len(n.ready) > 0 && (n.ready[0].clock < p.clock ||
			n.ready[0].clock == p.clock && n.ready[0].rank < p.rank)
		if earlier {
			return false
		}
		if len(n.inflight.ops) == 0 || n.inflight.ops[0].arrive > p.clock {
			n.steps++
			return true
		}
		n.landFirst(n.inflight.ops[0]) // may wake an earlier PE: look again
	}
}

// waitTurn blocks until p holds the baton (every goroutine of p that
// waits for it runs then) or is done.
func (n *Net) waitTurn(p *pe) {
	for n.holder != p && p.st != stDone {
		p.cond.Wait()
	}
}

// waitTurnOrAside is waitTurn for a goroutine of p that yielded or found
// p ready: it also returns once another goroutine of p parks on the bell
// or in an agreement (which broadcast p.cond), and the caller runs on
// unscheduled, as enter says. Waiting on for p's turn would strand it: the
// write that ends the other goroutine's wait may be its own to make.
func (n *Net) waitTurnOrAside(p *pe) {
	for n.holder != p && p.st != stDone && p.st != stWaiting && p.st != stOutside {
		p.cond.Wait()
	}
}

// schedule picks the next PE to run. The caller holds n.mu and no PE holds
// the baton. It lands writes as the mode allows and, when no PE can run,
// lands what is needed for one to; when nothing can make progress it picks
// a waiting PE to report the deadlock.
func (n *Net) schedule() {
	n.steps++
	if n.stall != nil {
		n.stall.Stop()
		n.stall = nil
	}
	n.scheduling = true
	defer func() { n.scheduling = false }()
	for {
		n.landSome()
		if len(n.ready) == 0 && n.inflight.writes > 0 {
			n.landNext()
			continue
		}
		if len(n.ready) == 0 && n.outside == 0 {
			// Everyone else is blocked, so the set of PEs back from
			// their agreements is complete.
			n.rejoin()
		}
		if len(n.ready) > 0 {
			p := n.pick()
			n.removeReady(p)
			p.st = stRunning
			n.holder = p
			n.tracef("run %d", p.rank)
			p.cond.Broadcast()
			return
		}
		if n.inflight.writes > 0 {
			return
		}
		if n.checked != n.progress && (n.outside > 0 || n.anyWaiting()) {
			// No PE can run: the blocked ones check their peers, once
			// the control plane (an agreement under way, a GlobalExit's
			// or a failure's notices on its own goroutines) has been
			// still for a moment.
			n.armCheck(n.steps)
			return
		}
		if n.outside > 0 {
			// A PE coming back from outside calls schedule again. PEs
			// already back wait for it, unless it waits for them (a peer
			// check ended their agreement while it waits in Finalize's):
			// after a grace period of real time they rejoin.
			if len(n.returned) > 0 {
				epoch := n.steps
				n.stall = time.AfterFunc(deadlockGrace, func() { n.rejoinLate(epoch) })
			}
			return
		}
		for _, p := range n.pes {
			if p.st == stWaiting {
				// Every PE waits. The control plane (GlobalExit, failure
				// notices) may still ring a bell from its own goroutines:
				// declare a deadlock only if nothing moves for a grace
				// period of real time.
				epoch := n.steps
				n.stall = time.AfterFunc(deadlockGrace, func() { n.declareDeadlock(epoch) })
				return
			}
		}
		return // every PE is done
	}
}

// rejoin makes the PEs back from their agreements ready, in rank order, so
// that real time does not leak into the schedule.
func (n *Net) rejoin() {
	sort.Slice(n.returned, func(i, j int) bool { return n.returned[i].rank < n.returned[j].rank })
	for _, p := range n.returned {
		p.st = stReady
		n.addReady(p)
	}
	n.returned = n.returned[:0]
}

// rejoinLate rejoins the PEs back from agreements while others are still
// outside, unless the world moved since scheduling step epoch.
func (n *Net) rejoinLate(epoch uint64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.steps != epoch || n.holder != nil || len(n.ready) > 0 || len(n.returned) == 0 {
		return
	}
	n.tracef("rejoin late")
	n.rejoin()
	n.schedule()
}

// deadlockGrace is how long a world where every PE waits may stay still
// before the simulator reports a deadlock.
const deadlockGrace = 300 * time.Millisecond

// declareDeadlock picks the lowest waiting PE to report a deadlock, unless
// the world moved since scheduling step epoch.
func (n *Net) declareDeadlock(epoch uint64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.steps != epoch || n.holder != nil || len(n.ready) > 0 || n.outside > 0 {
		return
	}
	if d := n.cfg.Deadlock; d != nil {
		n.tracef("deadlock")
		ended := make([]bool, len(n.pes))
		for r, p := range n.pes {
			ended[r] = p.st == stDone
		}
		// The verdict rings the waiting PEs' bells, which take n.mu.
		n.mu.Unlock()
		d(func(r int) bool { return ended[r] })
		n.mu.Lock()
		return
	}
	for _, p := range n.pes {
		if p.st == stWaiting {
			p.deadlock = true
			p.st = stRunning
			n.holder = p
			n.tracef("deadlock %d", p.rank)
			p.cond.Broadcast()
			return
		}
	}
}

// pick chooses among the ready PEs: with a model the one with the
// earliest clock (ties to the lowest rank), else one at random, slow PEs
// less often.
func (n *Net) pick() *pe {
	if n.cfg.Model != nil {
		return n.ready[0]
	}
	if w := n.woken; w != nil {
		n.woken = nil
		if w.st == stReady && n.rng.IntN(4) != 0 {
			return w
		}
	}
	for {
		p := n.ready[n.rng.IntN(len(n.ready))]
		if p.slow <= 1 || len(n.ready) == 1 || n.rng.Float64()*p.slow < 1 {
			return p
		}
	}
}

// ring marks p's heap changed: a waiting p becomes ready.
func (n *Net) ring(p *pe, at float64) {
	p.rung = true
	if p.st == stWaiting {
		n.progress++
		if n.cfg.Model != nil {
			p.clock = max(p.clock, at+n.link(p.rank, p.rank).Wake*p.slow+p.crowd)
		}
		p.st = stReady
		n.addReady(p)
		n.woken = p
		// A ring from outside the schedule (the control plane's
		// goroutines) may find nobody running: someone must pick.
		if n.holder == nil && !n.scheduling && n.started == len(n.pes) {
			n.schedule()
		}
	}
	p.inner.Ring()
}

// kill ends p by FailAfter.
func (n *Net) kill(p *pe) {
	n.die(p, "killed by sim.WithFailure after "+itoa(p.failAt)+" goshmem calls")
}

// die ends p, which holds the baton: its writes in flight are lost, the
// world hears of it (Config.Kill) before any other PE runs, and its
// goroutine unwinds with an Abort. Called with n.mu held; returns only by
// panicking, with n.mu free.
func (n *Net) die(p *pe, reason string) {
	n.tracef("die %d", p.rank)
	n.dropOut(p)
	p.st = stDone
	n.progress++
	n.mu.Unlock()
	if n.cfg.Kill != nil {
		n.cfg.Kill(p.rank, reason)
	}
	n.mu.Lock()
	n.holder = nil
	n.schedule()
	n.mu.Unlock()
	panic(&Abort{Rank: p.rank, Reason: reason})
}

func itoa(v int) string {
	if v == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	neg := v < 0
	if neg {
		v = -v
	}
	for v > 0 {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
