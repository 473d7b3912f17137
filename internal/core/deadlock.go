package core

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/goshmem/shmem/internal/coll"
	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/internal/lag"
	"github.com/goshmem/shmem/transport"
)

// DefaultDeadlockGrace is how long every live PE of a local world must stay
// blocked, with nothing changing, before the deadlock detector ends the
// world. Long against the microseconds a wake-up takes, short against a
// test's patience.
const DefaultDeadlockGrace = 500 * time.Millisecond

// detector watches a LocalWorld for a deadlock: every PE that has neither
// finalized nor failed is blocked inside goshmem, and no PE has blocked or
// unblocked since (so none runs user code that could write what another
// waits for, and no agreement is under way) for the grace period. Then no
// wait can ever end: the detector aborts every PE with ErrDeadlock and a
// report of what each is blocked in. In one process every put lands before
// it returns, so "nobody running" really means "nothing in flight"; a
// simulated network that holds writes (held) says so itself.
type detector struct {
	w       *LocalWorld
	held    WritesHeld // nil without a simulated network that holds writes
	stirred Stirred    // nil without a simulated network's scheduler
	grace   time.Duration
	gone    []atomic.Bool // by rank: failed (LocalWorld.Fail) or done
	stop    chan struct{}
	done    chan struct{}
}

// WritesHeld is a Net that holds writes in flight (the simulator's Lazy
// delivery, a cost model). They land as its scheduler steps, and a PE
// that spins through the schedule (a lock's waiter) steps it: a write
// held for hundreds of steps then lands after the detector's grace in
// real time, and may end a wait. The world is not stuck while any is held
// (TestFailureMatrix/lock-holder-leaves, Lazy with -race: a sync's post
// held for 600 steps while PE 0 spun in SetLock was reported a deadlock
// in 5 of 200 runs).
type WritesHeld interface {
	// WritesInFlight returns how many writes the network holds.
	WritesInFlight() int
}

// Stirred is a Net that sees the goroutines of a PE that are not blocked
// while the PE's others are (the simulator's scheduler): one that runs
// its own code, a computation or a sleep, between goshmem calls. The
// detector counts a PE blocked while any of its calls is, so without it
// the grace would run from when the others blocked, and such a goroutine
// calling now and then (a put every 100 ms, longer than the grace in
// all) was reported deadlocked; it runs from that goroutine's last call.
type Stirred interface {
	// Stirs returns a number that changes whenever a goroutine of a PE
	// whose other goroutines are all blocked calls goshmem or returns
	// from a call to its own code.
	Stirs() uint64
}

func (w *LocalWorld) startDetector(grace time.Duration, held WritesHeld, stirred Stirred) {
	// Large worlds take longer to wake on a few cores: 1 ms more per PE.
	grace += time.Duration(len(w.PEs)) * time.Millisecond
	d := &detector{w: w, held: held, stirred: stirred, grace: grace, gone: make([]atomic.Bool, len(w.PEs)), stop: make(chan struct{}), done: make(chan struct{})}
	w.det = d
	go d.run()
}

// Done tells the deadlock detector that rank's user code has ended (the
// simulator calls it when a PE's function returned and was finalized), so
// the others do not count on it.
func (w *LocalWorld) Done(rank int) {
	if w.det != nil && rank >= 0 && rank < len(w.det.gone) {
		w.det.gone[rank].Store(true)
	}
}

func (d *detector) close() {
	close(d.stop)
	<-d.done
}

func (d *detector) run() {
	defer close(d.done)
	period := d.grace / 5
	tick := time.NewTicker(period)
	defer tick.Stop()
	lagging := lag.New(period)
	// Two buffers, the last snapshot and the next, swapped: the detector
	// ticks for as long as the world runs, and what it allocates counts
	// against the PEs' allocation tests.
	last, next := make([]uint64, len(d.w.PEs)+2), make([]uint64, len(d.w.PEs)+2)
	seen := false // last holds a snapshot
	var since time.Time
	asked := false // the blocked PEs were asked to check their peers
	for {
		select {
		case <-d.stop:
			return
		case <-tick.C:
		}
		behind := lagging.Behind(time.Now())
		ok := d.snapshot(next)
		switch {
		case !ok:
			seen = false
		case !seen || !equal(next, last) || behind:
			last, next = next, last
			seen, since, asked = true, time.Now(), false
		case time.Since(since) >= d.grace && !asked:
			d.askChecks()
			since, asked = time.Now(), true
		case time.Since(since) >= d.grace:
			d.abort()
			return
		}
	}
}

// askChecks has every PE's waits check their peers at their next step,
// before the detector reports a deadlock, as the simulator's scheduler
// runs a round of checks first: a wait's own checks come up to a second
// apart, and a lock's waiter whose holder called Finalize was reported
// deadlocked instead of failed (TestFailureMatrix/lock-holder-leaves
// under the simulator's Lazy delivery with -race).
func (d *detector) askChecks() {
	for _, p := range d.w.PEs {
		p.s.blocks.checkNow.Store(true)
	}
}

// snapshot fills gens with every PE's block generation (and the
// coordinator's count and the network's Stirs last), and returns false
// unless every live PE is blocked (and at least one PE is live).
func (d *detector) snapshot(gens []uint64) bool {
	gens[len(d.w.PEs)] = d.w.coordMsgs.Load()
	if gens[len(d.w.PEs)]%2 == 1 {
		return false // the coordinator is at work: an agreement is under way
	}
	if d.stirred != nil {
		gens[len(d.w.PEs)+1] = d.stirred.Stirs()
	}
	if d.held != nil && d.held.WritesInFlight() > 0 {
		return false // a write still to land may end a wait
	}
	live := 0
	for r, p := range d.w.PEs {
		if d.gone[r].Load() || p.Finished() {
			gens[r] = 0
			continue
		}
		blocked, gen := p.blockGen()
		if !blocked {
			return false
		}
		gens[r] = gen
		live++
	}
	return live > 0
}

func (d *detector) abort() {
	d.w.abortAll(fmt.Sprintf("nothing changed for %v", d.grace), d.grace, func(r int) bool { return d.gone[r].Load() })
}

// Deadlock ends a world that can never progress, as the deadlock detector
// does: the simulator's scheduler calls it when every PE still running
// waits, nothing is in flight and a round of peer checks changed nothing.
// ended says which PEs have ended (finalized, failed or returned).
func (w *LocalWorld) Deadlock(ended func(rank int) bool) {
	w.abortAll("every PE still running waits, and nothing is in flight", time.Duration(1<<63-1), ended)
}

// Moves returns a number that changes whenever the world's control plane
// moves: the coordinator handles a message, an agreement's answer reaches
// a PE, a PE blocks or unblocks. The simulator waits for it to stand
// still before it decides that no agreement can complete.
func (w *LocalWorld) Moves() uint64 {
	m := w.coordMsgs.Load()
	for _, p := range w.PEs {
		m += p.s.blocks.gen.Load()
	}
	return m
}

// abortAll fails every blocked and later blocking call of the PEs that
// have not ended with ErrDeadlock, why and a report of what each PE is
// blocked in; a PE whose operation timeout is at most stuck (how long the
// world has been still) gets the ErrTimeout it would have had instead.
func (w *LocalWorld) abortAll(why string, stuck time.Duration, gone func(rank int) bool) {
	// PEs blocked in the same call on the same thing are listed together,
	// so the report stays short in a large world.
	var order []string
	by := map[string][]int{}
	for r, p := range w.PEs {
		what := "has ended"
		if !gone(r) && !p.Finished() {
			what = "blocked in " + p.blockedIn() + w.lockHolder(p)
		}
		if _, ok := by[what]; !ok {
			order = append(order, what)
		}
		by[what] = append(by[what], r)
	}
	lines := make([]string, len(order))
	for i, what := range order {
		pes := by[what]
		if len(pes) == 1 {
			lines[i] = fmt.Sprintf("PE %d %s", pes[0], what)
		} else {
			lines[i] = fmt.Sprintf("PEs %s %s", coll.Ranges(pes), what)
		}
	}
	report := strings.Join(lines, "; ")
	// Every verdict is stored before any PE is woken: a PE that wakes to
	// its own verdict and returns is failed by its runner, and a peer that
	// saw that failure before its own verdict would report the failure
	// instead of the deadlock it is part of.
	var woken []*PE
	for r, p := range w.PEs {
		if gone(r) || p.Finished() {
			continue
		}
		err := errs.New("wait", r, errs.NoPE, errs.ErrDeadlock, "no PE can make progress (%s): %s", why, report)
		if to := time.Duration(p.s.blocks.opTO.Load()); to > 0 && to <= stuck {
			err = errs.New("wait", r, errs.NoPE, errs.ErrTimeout, "the operation timeout (%v) passed while no PE could make progress: %s", to, report)
		}
		p.s.blocks.abort.Store(&verdict{err: err, everyPE: true})
		woken = append(woken, p)
	}
	for _, p := range woken {
		p.s.changed()
	}
}

// lockHolder names, for a PE waiting for a lock, the PE that records
// holding it (HoldLock): every PE's memory is in this process, so the
// report can say what a waiter on another PE could not read in one step.
func (w *LocalWorld) lockHolder(p *PE) string {
	lw := p.s.blocks.last.Load()
	if lw == nil || !lw.lock {
		return ""
	}
	for r, q := range w.PEs {
		if q.s.pool != nil && transport.Load64(q.s.local, q.s.pool.HeldWord()) == lw.off+1 {
			return fmt.Sprintf(", held by PE %d", r)
		}
	}
	return ", held by no PE"
}

func equal(a, b []uint64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}
