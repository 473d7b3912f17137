package core

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/goshmem/shmem/internal/coll"
	"github.com/goshmem/shmem/internal/errs"
)

// What a PE is blocked in. A wait registers itself only on its slow path
// (after the first polls failed), so a wait that ends at once costs
// nothing; a registered wait checks its peers now and then (Blocked
// .CheckPeers), honours the operation timeout, logs a hang report once it
// is long (SetHangReport), and is what the simulator's deadlock detector
// and a SIGQUIT report list.

// checkFirst is how long a wait waits before it first reads its peers'
// state; the interval then doubles up to checkMax. Reading a peer is a
// remote atomic, so a wait of a second costs about a dozen of them.
// A check reads every member, so in large teams it starts later (20 µs a
// member) and its interval grows to a second, keeping the reads of a
// thousand blocked PEs from starving the one they wait for.
const (
	checkFirst = 2 * time.Millisecond
	checkMax   = time.Second
)

func firstCheck(npes int) time.Duration {
	return max(checkFirst, time.Duration(npes)*20*time.Microsecond)
}

// blocks is a PE's registry of its blocked calls (several goroutines of one
// PE may wait at once).
type blocks struct {
	n     atomic.Int32  // calls blocked now
	gen   atomic.Uint64 // changes whenever a call blocks or unblocks
	last  atomic.Pointer[longWait]
	opTO  atomic.Int64 // WithOpTimeout, ns; 0 = none
	hang  atomic.Int64 // hang report after, ns; 0 = none
	abort atomic.Pointer[verdict]
	// checkNow asks a wait to check its peers at its next step: the
	// deadlock detector's last look (askChecks).
	checkNow atomic.Bool
	// made is when the registry was made: waits keep their start as an
	// offset from it (longWait.begun).
	made time.Time
	// spares are finished team waits, kept for the next wait of the same
	// call on the same team (see spares.go).
	spares spares
}

// verdict is an abort verdict: err ends the PE's blocking calls. everyPE
// marks the simulator's deadlock report, given to every PE still running
// at once (abortAll), after which they all go on to Finalize together; a
// PE's own Abort is not.
type verdict struct {
	err     error
	everyPE bool
}

// verdictErr is v's error, nil when v is.
func verdictErr(v *verdict) error {
	if v == nil {
		return nil
	}
	return v.err
}

func (p *PE) block(w *longWait) {
	p.s.blocks.last.Store(w)
	p.s.blocks.n.Add(1)
	p.s.blocks.gen.Add(1)
}

func (p *PE) unblock() {
	p.s.blocks.n.Add(-1)
	p.s.blocks.gen.Add(1)
}

// SetOpTimeout makes every blocking call that waits longer than d fail with
// ErrTimeout (WithOpTimeout); 0 means no limit. Backends set it before
// handing the PE out.
func (p *PE) SetOpTimeout(d time.Duration) { p.s.blocks.opTO.Store(int64(d)) }

// SetHangReport makes every call blocked longer than d log, once, what it
// is blocked in (SHMEM_HANG_REPORT); 0 turns it off.
func (p *PE) SetHangReport(d time.Duration) { p.s.blocks.hang.Store(int64(d)) }

// Abort makes every blocked and later blocking call of the PE fail with
// err, its Finalize's agreement included (Init's closer, whose peers never
// join it).
func (p *PE) Abort(err error) {
	p.s.blocks.abort.Store(&verdict{err: err})
	p.s.changed()
}

// Blocked reports whether a call of the PE is blocked now, a number that
// changes whenever one blocks or unblocks, and what the latest is blocked
// in ("" when none).
func (p *PE) Blocked() (blocked bool, gen uint64, what string) {
	blocked, gen = p.blockGen()
	if !blocked {
		return false, gen, ""
	}
	w := p.s.blocks.last.Load()
	if w == nil {
		return true, gen, "?"
	}
	return true, gen, fmt.Sprintf("%s on %s, for %v", w.op, w.waiting(), w.elapsed().Round(time.Millisecond))
}

// blockGen is Blocked without what: the deadlock detector's look, which
// describes nothing (a description allocates) unless it reports.
func (p *PE) blockGen() (blocked bool, gen uint64) {
	gen = p.s.blocks.gen.Load()
	return p.s.blocks.n.Load() > 0, gen
}

// blockedIn says what the PE's latest blocked call is in, without times.
func (p *PE) blockedIn() string {
	if w := p.s.blocks.last.Load(); w != nil && p.s.blocks.n.Load() > 0 {
		return w.op + " on " + w.waiting()
	}
	return "nothing"
}

// Report says what the PE is blocked in, for hang reports.
func (p *PE) Report() string {
	if ok, _, what := p.Blocked(); ok {
		return fmt.Sprintf("PE %d blocked in %s", p.MyPE(), what)
	}
	return fmt.Sprintf("PE %d not blocked in goshmem", p.MyPE())
}

// Finished reports whether the PE has finalized.
func (p *PE) Finished() bool { return p.s.finalized.Load() }

// longWait is the bookkeeping of one registered wait: its only
// allocation, which a team wait reuses (blocks.spares). A wait on a team
// operation has b; a wait on a word of this PE's heap (WaitUntil, signal
// waits) has off, and a wait for a lock also lock (see WaitLock);
// descriptions are made only when needed. Reports read the fields up to
// begun from other goroutines (blocks.last), so a reused wait keeps them
// unchanged and begun is atomic; the others are the waiter's own.
type longWait struct {
	p *PE
	waitKey
	begun atomic.Int64 // when the wait began, in ns since blocks.made

	check    time.Duration // elapsed time of the next peer check
	looks    int           // a lock's looks under a simulated network (step)
	reported bool
	before   *verdict // the abort verdict already given when the wait began
}

// waitKey is what a wait waits for: the fields reports read, and what a
// reused wait must match (spares.take).
type waitKey struct {
	op   string
	b    coll.Blocked
	off  uint64 // the word waited on, noWord if unknown
	lock bool   // the word is a lock on PE home
	home int
}

// begin starts w's clock and duties afresh.
func (w *longWait) begin() {
	w.begun.Store(int64(time.Since(w.p.s.blocks.made)))
	w.check = firstCheck(w.p.NPEs())
	w.looks = 0
	w.reported = false
}

// elapsed is how long ago w began.
func (w *longWait) elapsed() time.Duration {
	return time.Since(w.p.s.blocks.made) - time.Duration(w.begun.Load())
}

// startLong registers a wait of op on b (a team operation, an
// agreement), reusing a spare of the PE's that was the same call's on the
// same team: then every field a report reads is already what it would
// set. endLong ends it.
func (p *PE) startLong(op string, b coll.Blocked) *longWait {
	return p.start(waitKey{op: op, b: b, off: noWord}, p.s.blocks.abort.Load())
}

// start registers a wait for k, a spare's when one matches, with before
// as the abort verdict already given.
func (p *PE) start(k waitKey, before *verdict) *longWait {
	w := p.s.blocks.spares.take(p, k)
	if w == nil {
		w = &longWait{p: p, waitKey: k}
	}
	w.begin()
	w.before = before
	p.block(w)
	return w
}

// endLong unregisters w, which startLong or startWord made, and keeps it
// for the next wait like it (spares.keep).
func (p *PE) endLong(w *longWait) {
	p.unblock()
	p.s.blocks.spares.keep(w)
}

// verdict returns the error of the abort verdict (the simulator's
// deadlock report, Abort) that ends the wait, nil when none does. A
// verdict ends every wait blocked when it came and every later one, so
// that a PE which blocks again cannot hang, with one exception: a Finalize
// begun after the deadlock report. Every PE it aborted goes on to
// Finalize, whose agreement completes once they all arrive; failing it at
// its first look (2 ms, or at once when a notice woke it) made Finalize's
// result depend on how fast the others got there. That wait stays bounded
// by peer failures and the coordinator's timeout. A PE's own Abort has no
// such exception: its peers may never join (TestStopPEEndsTheStartedPE).
func (w *longWait) verdict() error {
	v := w.p.s.blocks.abort.Load()
	if _, finalize := w.b.(groupWait); finalize && v != nil && v.everyPE && v == w.before {
		return nil
	}
	return verdictErr(v)
}

// startWord registers a wait of op on the word at heap offset off (a lock
// on PE home when lock), reusing a spare of the same wait as startLong
// does: a WaitUntil in a loop allocates nothing. endLong ends it.
func (p *PE) startWord(op string, off uint64, lock bool, home int) *longWait {
	return p.start(waitKey{op: op, off: off, lock: lock, home: home}, nil)
}

// waiting says what the wait waits for.
func (w *longWait) waiting() string {
	switch {
	case w.b != nil:
		return w.b.Waiting()
	case w.lock:
		return fmt.Sprintf("the lock at heap offset %#x of PE %d", w.off, w.home)
	case w.off != noWord:
		return fmt.Sprintf("its word at heap offset %#x", w.off)
	}
	return "this PE's memory"
}

// checkPeers asks whether the wait can still end.
func (w *longWait) checkPeers() error {
	switch {
	case w.b != nil:
		return w.b.CheckPeers(w.op)
	case w.lock:
		return w.p.lockCheck(w)
	}
	return w.p.wordCheck(w)
}

// lockLooks is how many looks at a lock a waiter under a simulated
// network makes between checks of its peers (step): a check reads every
// peer's held word, so it comes at most once every 16 looks per PE.
func lockLooks(npes int) int { return max(256, 16*npes) }

// noDuty is step's answer when a wait has no duty in real time: it waits
// only for events (its bell, its answer, the PE's notices).
const noDuty = time.Duration(1 << 62)

// step runs the periodic duties of a long wait: the abort verdict, the peer
// check, the operation timeout, the hang report. It returns how long the
// wait may sleep before the next of them is due (noDuty when none is:
// the checks are the scheduler's or there are none, and no timeout or
// report is set), or the error that ends the wait.
func (w *longWait) step() (time.Duration, error) {
	s := w.p.s
	if err := w.verdict(); err != nil {
		return 0, errs.As(w.op, w.p.MyPE(), err)
	}
	el := w.elapsed()
	due := el >= w.check
	if due {
		w.check = el + min(max(el, checkFirst), checkMax)
	}
	next := w.check - el
	if _, none := w.b.(groupWait); none {
		next = noDuty // Finalize's: nothing to check
	}
	if c := s.checks; c != nil && !w.lock {
		// A scheduled network says when, and wakes an agreement's
		// waiter for it (OnCheck).
		due = c.CheckDue()
		next = noDuty
	} else if c != nil {
		// A lock's waiter spins through the schedule instead of waiting,
		// so the world never stands still for the scheduler's checks: it
		// checks every lockLooks looks at the lock, not on real time,
		// whose checks (reads of every peer, each a scheduling point)
		// would fall at other points of the schedule in each run of a
		// seed.
		w.looks++
		due = w.looks%lockLooks(w.p.NPEs()) == 0
	}
	if s.blocks.checkNow.Swap(false) {
		due = true
	}
	if due {
		if err := w.checkPeers(); err != nil {
			return 0, err
		}
	}
	if to := time.Duration(s.blocks.opTO.Load()); to > 0 {
		if el >= to {
			return 0, w.timedOut(el)
		}
		next = min(next, to-el)
	}
	if h := time.Duration(s.blocks.hang.Load()); h > 0 && !w.reported {
		if el >= h {
			w.reported = true
			s.log.Warn("blocked", "call", w.op, "on", w.waiting(), "for", el.Round(time.Millisecond))
		} else {
			next = min(next, h-el)
		}
	}
	return max(next, time.Millisecond), nil
}

// absentees is a Blocked that can tell which PEs have not reached what
// the wait waits for (coll.Team.Absent, groupWait.Absent): the PEs and a
// phrase saying so, nil and "" when it cannot tell or all did.
type absentees interface {
	Absent(op string) ([]int, string)
}

// timedOut is the error of a wait that the operation timeout ends after
// el: what it waited on and, where the wait can tell, which PEs had not
// arrived (the first is the error's target).
func (w *longWait) timedOut(el time.Duration) error {
	target, missing := errs.NoPE, ""
	if a, ok := w.b.(absentees); ok {
		if pes, say := a.Absent(w.op); len(pes) > 0 {
			target, missing = pes[0], "; "+say
		}
	}
	return errs.New(w.op, w.p.MyPE(), target, errs.ErrTimeout, "waited %v (the operation timeout) on %s%s", el.Round(time.Millisecond), w.waiting(), missing)
}

// WaitCheck returns the error with which a wait of this PE on its own
// memory would end now (see WaitLocal: a failure, an exit, Finalize,
// every other PE having called Finalize or failed), nil while the wait
// may still be satisfied. For waits that poll memory themselves.
func (p *PE) WaitCheck(op string) error {
	if err := p.waitable(op); err != nil {
		return err
	}
	return p.wordCheck(&longWait{p: p, waitKey: waitKey{op: op, off: noWord}})
}

// wordCheck: a word of this PE's heap (WaitUntil, signal waits, locks)
// may be written by any PE, so the wait can never end once every other PE
// has called Finalize or failed.
func (p *PE) wordCheck(w *longWait) error {
	var left []int
	for r := 0; r < p.NPEs(); r++ {
		if r == p.MyPE() {
			continue
		}
		if p.s.nFailed.Load() != 0 && p.s.failed.Load(r) != nil {
			continue // counted as gone; waitable reports failures itself
		}
		ok, err := coll.Left(p, w.op, r)
		if err != nil || !ok {
			return nil // someone may still write
		}
		left = append(left, r)
	}
	if len(left) == 0 {
		return nil
	}
	if err := p.peerFailed(w.op); err != nil {
		// A PE counted as gone above failed, maybe since the wait last
		// looked (waitable): that failure is the cause, as it would have
		// been then (a lock's waiter named a PE that had finalized, not
		// the holder that died: TestFailureMatrix/lock-holder-dies, Lazy).
		return err
	}
	return errs.New(w.op, p.MyPE(), left[0], errs.ErrPEFailed, "every other PE has called Finalize or failed (PEs %s) while this PE waits in %s on %s",
		coll.Ranges(left), w.op, w.waiting())
}
