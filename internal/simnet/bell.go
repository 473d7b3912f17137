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

func (b *bell) Arm() uint32 {
	b.n.mu.Lock()
	b.p.rung = false
	b.n.mu.Unlock()
	return b.p.inner.Arm()
}

func (b *bell) Wait(armed uint32, timeout time.Duration) {
	n, p := b.n, b.p
	n.mu.Lock()
	if p.st == stReady {
		n.waitTurn(p) // another goroutine of p yielded: run with it
		n.mu.Unlock()
		return
	}
	if p.st != stRunning || n.holder != p {
		n.mu.Unlock()
		p.inner.Wait(armed, timeout)
		return
	}
	if p.rung {
		n.yield(p)
		n.mu.Unlock()
		return
	}
	n.tracef("wait %d", p.rank)
	p.st = stWaiting
	n.holder = nil
	n.schedule()
	n.waitTurn(p)
	if p.deadlock {
		n.die(p, "deadlock: every PE still running waits, and no write is in flight")
	}
	n.mu.Unlock()
}

func (b *bell) Disarm() { b.p.inner.Disarm() }

// Watch implements core.PeerChecker: until Watch(-1), the PE's waits also
// end when a write lands in PE rank's heap. A lock's waiter watches the
// lock's home, so that under the scheduler it waits (and a world where
// only it could run is seen to stand still) instead of polling.
func (b *bell) Watch(rank int) {
	n, p := b.n, b.p
	n.mu.Lock()
	defer n.mu.Unlock()
	if w := p.watched; w != nil {
		for i, q := range w.watchers {
			if q == p {
				w.watchers = append(w.watchers[:i], w.watchers[i+1:]...)
				break
			}
		}
		p.watched = nil
	}
	if rank >= 0 && rank < len(n.pes) && rank != p.rank {
		p.watched = n.pes[rank]
		p.watched.watchers = append(p.watched.watchers, p)
	}
}

// CheckDue implements core.PeerChecker.
func (b *bell) CheckDue() bool { return b.n.checkDue(b.p) }

// Poll implements core.PeerChecker: a scheduling point for a call that
// reads only the PE's own heap (Test, SignalFetch). A PE spinning on one
// is never blocked, so the world never stands still for the check rounds
// its waiting peers need (a peer's operation timeout, a peer that left):
// while it spins with nothing in flight, it runs a round every checkGrace
// of real time itself. With a model its clock moves on to the next event
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
	if n.inflight.writes == 0 && n.anyWaiting() && time.Since(n.polled) >= checkGrace {
		n.polled = time.Now()
		n.checked = n.progress - 1 // a round even if nothing moved: time did
		n.checkRound()
	}
	n.mu.Unlock()
}
