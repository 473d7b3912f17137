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
	if n.cfg.Unscheduled {
		b.waitUnscheduled(armed, timeout)
		return
	}
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
	p.cond.Broadcast() // p's goroutines parked for its turn run aside
	n.holder = nil
	n.schedule()
	n.waitTurn(p)
	if p.deadlock {
		n.die(p, "deadlock: every PE still running waits, and no write is in flight")
	}
	n.mu.Unlock()
}

func (b *bell) Disarm() { b.p.inner.Disarm() }

// CheckDue implements core.PeerChecker.
func (b *bell) CheckDue() bool { return b.n.checkDue(b.p) }

// waitUnscheduled is Wait in an Unscheduled network, called with n.mu
// held: nobody else may call again, so the network delivers to the waiter
// what it holds in flight to it, one write a wake-up in fence order, and
// waits only when there is none; a write issued meanwhile wakes it to
// land that one (issue). It returns with n.mu free.
func (b *bell) waitUnscheduled(armed uint32, timeout time.Duration) {
	n, p := b.n, b.p
	if n.landTo(p) {
		n.mu.Unlock() // the landing rang: the caller looks again
		return
	}
	p.waiting++
	n.mu.Unlock()
	p.inner.Wait(armed, timeout)
	n.mu.Lock()
	p.waiting--
	n.mu.Unlock()
}
