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

// CheckDue implements core.PeerChecker.
func (b *bell) CheckDue() bool { return b.n.checkDue(b.p) }
