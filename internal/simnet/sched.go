package simnet

import (
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goshmem/shmem/internal/lag"
	"github.com/goshmem/shmem/transport"
)

type status uint8

const (
	stIdle    status = iota // not started (the world is being built)
	stReady                 // may run; waits for the scheduler to pick it
	stRunning               // holds the baton: the only PE running
	// stBlocked: no goroutine of the PE wants the baton; each one the
	// scheduler knows of waits on the bell (pe.waits) until a write lands,
	// or is in a control-plane agreement (pe.outside).
	stBlocked
	stReturned // back from outside; rejoins at quiescence
	stDone     // finished, or dead
)

// pe is the simulator's view of one PE.
//
// A PE may call goshmem from several goroutines. The baton is the PE's:
// while it holds it, every goroutine of it may run, and the scheduler
// counts those that cannot: each blocked in Bell.Wait is a waiter
// (waits), woken only by a ring after its own Arm (rings), and each in an
// agreement is outside. The PE gives the baton up, blocked, only when the
// goroutine that blocks leaves no goroutine of it that wants the baton
// (parked for its turn, or a waiter rung since it blocked); a goroutine the
// scheduler did not count on (one that was running its own code) that
// calls while the PE is blocked makes it ready again. So a write that one
// goroutine waits for wakes it whatever the others wait for, and a world
// is deadlocked only when every goroutine of every live PE is blocked with
// nothing in flight.
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
	deadlock bool    // picked to report that every PE waits for nothing
	// rings counts the rings of the PE's bell: Arm returns it, and a
	// waiter is rung once it moved on.
	rings uint32
	// waits counts the goroutines blocked in Bell.Wait, rungWaits those
	// of them rung since they blocked (each wakes in the PE's next turn),
	// parked those waiting for the PE's turn (waitTurn), outside those in
	// a control-plane agreement (Block).
	waits, rungWaits, parked, outside int
	// check: how many of the PE's blocked goroutines are asked to check
	// their peers (checkRound); atomic, as the PEs in an agreement read
	// it without the scheduler's lock.
	check atomic.Int32
	// wake wakes the PE's goroutines waiting in an agreement, outside
	// the schedule (core.PeerChecker.OnCheck), so that they look at
	// check; nil until the PE registers it.
	wake  func()
	paths map[int32]*path // made on first use (Net.Path)
	// waiting counts the goroutines blocked on this PE's bell in an
	// Unscheduled network: a write issued to it wakes them to land it.
	// (Under the scheduler, waits counts them.)
	waiting int

	rounds  []*round // the agreements it is outside in (Block)
	streams uint32   // completion streams opened (NewStream), one per context
	out     []*op    // issued, not landed, in issue order (writes and NBI gets)

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
	// Other goroutines of p parked for its turn or waiting on its bell
	// would wait for a pick that no longer comes: they see stDone.
	p.cond.Broadcast()
	// p's goroutines in (or back from) an agreement must not rejoin:
	// picked, p would hold the baton with nobody to hand it on. Their
	// resume finds p done and returns. What waited for them to come back
	// (a rejoin, a check round) may go on now.
	n.outside -= p.outside
	p.outside = 0
	n.leaveRounds(p)
	switch was {
	case stReady:
		n.removeReady(p)
	case stRunning:
		n.holder = nil
		n.schedule()
	case stBlocked, stReturned:
		if was == stReturned {
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
// baton. A PE may have several goroutines: each call waits for the PE's
// turn (takeTurn), and runs unscheduled only while the world is being
// built or after the PE ended (replay does not hold for such PEs: their
// goroutines share the turn in real time). In an Unscheduled network
// every call is a step that lands the Lazy writes whose delay has passed.
// enter may kill p (FailAfter), in which case it unlocks n.mu and panics.
func (n *Net) enter(p *pe) bool {
	if n.cfg.Unscheduled {
		n.steps++
		n.landSome()
		return false
	}
	picked := n.holder != p // takeTurn waits for a pick: no yield then
	if !n.takeTurn(p) {
		return false
	}
	p.ops++
	if p.failAt >= 0 && p.ops > p.failAt {
		n.kill(p)
	}
	if !picked {
		n.yield(p)
	}
	return true
}

// endCall ends a call of a goroutine of p (leave) and unlocks n.mu.
func (n *Net) endCall(p *pe) {
	n.leave(p)
	n.mu.Unlock()
}

// leave is called when a goroutine of p returns from a call to its own
// code. A PE with other goroutines blocked (on the bell or in agreements)
// then gives the baton up, unless another goroutine of it wants it: the
// caller may not call again for good (it returns, or waits on a channel
// for the blocked ones), and they may wait for what only other PEs write.
// Its next call takes the baton again (takeTurn). A PE with no goroutine
// blocked keeps the baton between calls, so that the code of a PE of one
// goroutine runs in its turn, and replays.
func (n *Net) leave(p *pe) {
	if n.holder != p || p.waits+p.outside == 0 || p.othersWant() {
		return
	}
	n.tracef("leave %d", p.rank)
	n.stirs.Add(1)
	p.st = stBlocked
	n.holder = nil
	n.schedule()
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
	n.waitTurn(p)
}

// takeTurn has the calling goroutine of p run in p's turn: at once when p
// holds the baton, else once the scheduler picks p. A blocked p becomes
// ready first: the caller is a goroutine the scheduler did not count on
// (it ran its own code while the others blocked), and it may write what
// they wait for. It reports false when the caller runs unscheduled:
// while the world is being built, or once p has ended.
func (n *Net) takeTurn(p *pe) bool {
	switch p.st {
	case stIdle, stDone:
		return false
	case stBlocked:
		n.unblock(p)
	}
	n.waitTurn(p)
	return n.holder == p
}

// unblock makes a blocked p ready for a goroutine of it that calls.
func (n *Net) unblock(p *pe) {
	n.tracef("unblock %d", p.rank)
	n.stirs.Add(1)
	p.st = stReady
	n.addReady(p)
	n.progress++
	if n.holder == nil && !n.scheduling && n.started == len(n.pes) {
		n.schedule()
	}
}

// othersWant reports whether a goroutine of p other than the caller wants
// the baton: parked for p's turn, or waiting on the bell and rung since.
// Only then does p keep the baton when the caller blocks.
func (p *pe) othersWant() bool { return p.parked+p.rungWaits > 0 }

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
// waits for it runs then) or is done. p must not be blocked: a parked
// goroutine is one that wants the baton.
func (n *Net) waitTurn(p *pe) {
	if n.holder == p || p.st == stDone {
		return
	}
	p.parked++
	for n.holder != p && p.st != stDone {
		p.cond.Wait()
	}
	p.parked--
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
				n.stall = time.AfterFunc(rejoinGrace, func() { n.rejoinLate(epoch) })
			}
			return
		}
		for _, p := range n.pes {
			if p.blockedOnBell() {
				// Every PE waits. A goroutine of a PE running its own
				// code may still call (its call would be a step, and this
				// timer would start again when it returns), and the
				// control plane (GlobalExit, failure notices) may ring a
				// bell from its own goroutines: declare a deadlock only
				// if nothing moves for the grace (Config.Grace).
				if n.grace() >= 0 {
					n.armDeadlock(n.steps)
				}
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
	if n.steps != epoch || n.holder != nil || len(n.ready) > 0 || len(n.returned) == 0 || n.roundsSure() {
		return // the world moved, or will when an agreement's members come back
	}
	n.tracef("rejoin late")
	n.rejoin()
	n.schedule()
}

// rejoinGrace is how long the PEs back from their agreements wait for
// those still outside before they rejoin the schedule without them.
const rejoinGrace = 300 * time.Millisecond

// DefaultGrace is Config.Grace when it is 0: sim.WithDeadlockGrace's
// default, the real-time detector's (core.DefaultDeadlockGrace).
const DefaultGrace = 500 * time.Millisecond

// grace is how long a world where every PE waits may stay still before
// the simulator reports a deadlock; negative: never.
func (n *Net) grace() time.Duration {
	if n.cfg.Grace == 0 {
		return DefaultGrace
	}
	return n.cfg.Grace
}

// Stirs returns a number that changes whenever a goroutine of a PE whose
// other goroutines are all blocked calls goshmem or returns from a call
// to its own code (core.Stirred): such a goroutine is not blocked, and
// the real-time deadlock detector gives it the grace from its last call,
// not from when the rest of the world blocked.
func (n *Net) Stirs() uint64 { return n.stirs.Load() }

// armDeadlock declares a deadlock after the grace unless the world moves
// since scheduling step epoch. Called with n.mu held.
func (n *Net) armDeadlock(epoch uint64) {
	if n.lag == nil {
		n.lag = lag.New(n.grace())
	}
	n.lag.Behind(time.Now()) // takes stock: the look at the end compares with now
	n.stall = time.AfterFunc(n.grace(), func() { n.declareDeadlock(epoch) })
}

// declareDeadlock picks the lowest waiting PE to report a deadlock, unless
// the world moved since scheduling step epoch, or the process fell behind
// during the grace (lag.Lag: a goroutine running its own code, which may
// still call, waited long to run), when the grace starts again.
func (n *Net) declareDeadlock(epoch uint64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.steps != epoch || n.holder != nil || len(n.ready) > 0 || n.outside > 0 {
		return
	}
	if n.lag.Behind(time.Now()) {
		n.armDeadlock(epoch)
		return
	}
	if n.inflight.writes > 0 {
		// Issued by a goroutine that ran unscheduled (of a PE that
		// ended): a write may still end a wait.
		n.schedule()
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
		if p.blockedOnBell() {
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

// ring marks p's heap changed: every goroutine of p waiting on the bell
// is rung, and wakes in p's next turn (at once if p holds the baton); a
// blocked p with waiters becomes ready.
func (n *Net) ring(p *pe, at float64) {
	p.rings++
	p.rungWaits = p.waits
	if p.blockedOnBell() {
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
	} else if n.holder == p && p.waits > 0 {
		p.cond.Broadcast() // its waiters run in the turn it holds
	}
	p.inner.Ring()
}

// blockedOnBell reports whether p is blocked with a goroutine waiting on its
// bell (a write to p may wake it), not only in agreements.
func (p *pe) blockedOnBell() bool { return p.st == stBlocked && p.waits > 0 }

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
	n.outside -= p.outside // as in Exit
	p.outside = 0
	n.leaveRounds(p)
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
