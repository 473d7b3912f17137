package simnet

import "time"

// bell is a PE's bell under the scheduler: a waiting PE gives up the
// baton and is ready again when a write lands in its heap.
type bell struct {
	n *Net
	p *pe
}

func (b *bell) Ring() {
	b.n.mu.Lock()
	b.n.ring(b.p, b.p.clock)
	b.n.mu.Unlock()
}

// Arm returns the count of the PE's rings: a Wait given it sleeps only
// while no ring came since, whatever its other goroutines armed.
func (b *bell) Arm() uint32 {
	if b.n.cfg.Unscheduled {
		return b.p.inner.Arm()
	}
	b.n.mu.Lock()
	armed := b.p.rings
	b.n.mu.Unlock()
	return armed
}

// Wait reports a ring whenever the scheduler hands the turn back (the
// simulator's PEs do not poll, so the answer changes nothing there). The
// caller is one waiter of the PE, woken in the PE's turn once a ring came
// after its Arm; the PE gives the baton up only if no other goroutine of
// it wants it (see pe).
func (b *bell) Wait(armed uint32, timeout time.Duration) bool {
	n, p := b.n, b.p
	n.mu.Lock()
	if n.cfg.Unscheduled {
		return b.waitUnscheduled(armed, timeout)
	}
	if p.st == stIdle || p.st == stDone {
		return b.waitOff(armed, timeout)
	}
	if armed != p.rings {
		// Rung since Arm: the caller looks again (a scheduling point if
		// it holds the baton; if not, its next call takes it).
		if n.holder == p {
			n.yield(p)
		}
		n.endCall(p)
		return true
	}
	p.waits++
	if n.holder == p && !p.othersWant() {
		n.tracef("wait %d", p.rank)
		p.st = stBlocked
		n.holder = nil
		n.schedule()
	}
	for (armed == p.rings || n.holder != p) && p.st != stDone && !p.deadlock {
		p.cond.Wait()
	}
	p.waits--
	if armed != p.rings {
		p.rungWaits--
	}
	if p.deadlock && n.holder == p {
		n.die(p, "deadlock: every PE still running waits, and no write is in flight")
	}
	n.endCall(p)
	return true
}

// waitOff is Wait for a goroutine of a PE the scheduler does not run (the
// world is being built, or the PE ended), called with n.mu held: it
// sleeps on the PE's own bell, as a process would. It returns with n.mu
// free.
func (b *bell) waitOff(armed uint32, timeout time.Duration) bool {
	p := b.p
	if armed != p.rings {
		b.n.mu.Unlock()
		return true
	}
	// Armed under n.mu, which every ring takes: none is missed.
	inner := p.inner.Arm()
	b.n.mu.Unlock()
	rung := p.inner.Wait(inner, timeout)
	p.inner.Disarm()
	return rung
}

func (b *bell) Disarm() {
	if b.n.cfg.Unscheduled {
		b.p.inner.Disarm()
	}
}

// OnCheck implements core.PeerChecker.
func (b *bell) OnCheck(wake func()) {
	b.n.mu.Lock()
	b.p.wake = wake
	b.n.mu.Unlock()
}

// CheckDue implements core.PeerChecker.
func (b *bell) CheckDue() bool { return b.n.checkDue(b.p) }

// Poll implements core.PeerChecker: a scheduling point for a call that
// reads only the PE's own heap (Test, SignalFetch). A PE spinning on one
// is never blocked, so the world never stands still for the check rounds
// its waiting peers need (a peer's operation timeout, a peer that left):
// while it spins with nothing in flight, it runs a round itself every
// pollLooks polls, a count and not real time, so that a seed replays
// (rounds every 20 ms of real time fell at other points of the schedule
// in each run). With a model its clock moves on to the next event
// (the next arrival, or the earliest ready PE), as a spinning PE's would:
// otherwise it would keep the baton at a clock where nothing lands.
func (b *bell) Poll() {
	n, p := b.n, b.p
	n.mu.Lock()
	if !n.enter(p) {
		n.mu.Unlock()
		return
	}
	if n.cfg.Model != nil {
		next := -1.0
		if len(n.inflight.ops) > 0 {
			next = n.inflight.ops[0].arrive
		}
		if len(n.ready) > 0 && (next < 0 || n.ready[0].clock < next) {
			next = n.ready[0].clock
		}
		if next > p.clock {
			p.clock = next
		}
	}
	if n.inflight.writes == 0 && n.anyWaiting() {
		n.polls++
	}
	if n.polls >= pollLooks(len(n.pes)) {
		n.polls = 0
		n.checked = n.progress - 1 // a round even if nothing moved: polls did
		n.checkRound()
	}
	n.endCall(p)
}

// pollLooks is how many polls with nothing in flight a polling PE makes
// between the check rounds it runs: a round reads every peer's state for
// each waiting PE, and a poll costs a microsecond or two, so a round comes
// every few milliseconds of spinning, as the 20 ms of real time it
// replaced did, a little more often.
func pollLooks(npes int) int { return max(4096, 64*npes) }

// waitUnscheduled is Wait in an Unscheduled network, called with n.mu
// held: nobody else may call again, so the network delivers to the waiter
// what it holds in flight to it, one write a wake-up in fence order, and
// waits only when there is none; a write issued meanwhile wakes it to
// land that one (issue). It returns with n.mu free.
func (b *bell) waitUnscheduled(armed uint32, timeout time.Duration) bool {
	n, p := b.n, b.p
	if n.landTo(p) {
		n.mu.Unlock() // the landing rang: the caller looks again
		return true
	}
	p.waiting++
	n.mu.Unlock()
	rung := p.inner.Wait(armed, timeout)
	n.mu.Lock()
	p.waiting--
	n.mu.Unlock()
	return rung
}
