package simnet

import "time"

// Peer checks under the scheduler. A PE blocked in a wait or an agreement
// learns that a peer called Finalize, died or entered another collective
// by reading its peers' words (core's peer checks). Real time says nothing
// here (every wait of a large simulated world is long in real time, and
// replay must not depend on it), so the scheduler calls a round of checks
// instead: once per still spell, when no PE can run.

// checkRound has every blocked PE check its peers once, when no PE can run
// and nothing changed since the last round: a peer that called Finalize,
// died or entered another collective while they wait is found so. The
// waiting PEs become ready, in rank order; those in an agreement, outside
// the schedule, are woken to check (they wait for nothing else to happen).
func (n *Net) checkRound() {
	if n.checked == n.progress {
		return
	}
	n.checked = n.progress
	n.tracef("check round")
	for _, p := range n.pes {
		switch {
		case p.st == stBlocked:
			// Each of its blocked goroutines checks once.
			p.check.Store(int32(p.waits + p.outside))
			if p.waits > 0 {
				// Its waiters look again, as after a ring.
				p.rings++
				p.rungWaits = p.waits
				p.st = stReady
				n.addReady(p)
			}
		case p.outside > 0 && p.st != stDone:
			// Goroutines in agreements of a PE whose others run.
			p.check.Store(int32(p.outside))
		default:
			continue
		}
		if p.outside > 0 && p.wake != nil {
			p.wake()
		}
	}
}

// checkGrace is how long a world where no PE can run stays still before its
// waiting PEs check their peers: long against the microseconds an actor
// takes to deliver a notice, short against a test's patience.
const checkGrace = 20 * time.Millisecond

func (n *Net) anyWaiting() bool {
	for _, p := range n.pes {
		if p.blockedOnBell() {
			return true
		}
	}
	return false
}

// armCheck runs a round of peer checks after checkGrace unless the world
// moved since scheduling step epoch; while the control plane moves
// (Config.Control) it waits again.
func (n *Net) armCheck(epoch uint64) {
	var msgs uint64
	if n.cfg.Control != nil {
		msgs = n.cfg.Control()
	}
	// Answers to an agreement of many PEs take their goroutines a while
	// to reach: 20 µs more a PE outside.
	grace := checkGrace + time.Duration(n.outside)*20*time.Microsecond
	n.stall = time.AfterFunc(grace, func() { n.stillFor(epoch, msgs) })
}

// stillFor is armCheck's timer: the world stood still since scheduling
// step epoch, with msgs the control plane's count then. It runs a round
// of checks unless something moved or is sure to (an agreement every
// member entered: see rounds.go), and waits again while the control
// plane moves.
func (n *Net) stillFor(epoch, msgs uint64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.steps != epoch || n.holder != nil || len(n.ready) > 0 || n.roundsSure() {
		return
	}
	if n.cfg.Control != nil && n.cfg.Control() != msgs {
		n.armCheck(epoch)
		return
	}
	n.checkRound()
	n.schedule()
}

// checkDue reports whether PE p, blocked in a wait or an agreement, checks
// its peers now (core.PeerChecker): only when a round of checks asked it
// to, whatever real time says, so a healthy world of n PEs does not read
// n² words and a seeded run replays.
func (n *Net) checkDue(p *pe) bool {
	for {
		c := p.check.Load()
		if c <= 0 {
			return false
		}
		if p.check.CompareAndSwap(c, c-1) {
			return true
		}
	}
}
