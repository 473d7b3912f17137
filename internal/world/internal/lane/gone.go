package lane

import "time"

// notify wakes the waiters of await; called under l.mu.
func (l *Lane) notify() {
	close(l.changed)
	l.changed = make(chan struct{})
}

func (l *Lane) markGone(rank int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.gone[rank] {
		l.gone[rank] = true
		l.notify()
	}
}

func (l *Lane) markDone() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.done++
	l.notify()
}

// AwaitGone waits until the link to every linked peer but except (-1:
// none) has ended (the peer left or failed), or d has passed. Peers
// reached through a relay are not waited for: their end is not seen here.
func (l *Lane) AwaitGone(except int, d time.Duration) {
	l.await(d, func() bool {
		for r, g := range l.gone {
			if r != l.me && r != except && !g && l.routes[r] != RoleRelay {
				return false
			}
		}
		return true
	})
}

// AwaitGoneOf waits until the links to every PE of ranks have ended, or d
// has passed.
func (l *Lane) AwaitGoneOf(ranks []int, d time.Duration) {
	l.await(d, func() bool {
		for _, r := range ranks {
			if r >= 0 && r < len(l.gone) && !l.gone[r] {
				return false
			}
		}
		return true
	})
}

// await waits until done, called under l.mu, holds, or d has passed.
func (l *Lane) await(d time.Duration, done func() bool) {
	select {
	case <-l.joined:
	default:
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		l.mu.Lock()
		ok, ch := done(), l.changed
		l.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-t.C:
			return
		}
	}
}
