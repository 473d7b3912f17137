package admit

import (
	"sync"
	"time"
)

// Limiter passes at most one event per Every and counts the events it holds
// back in between, so that a log line can say how many it stands for: what
// bounds the refusal lines of an Acceptor, and any other log a stranger can
// drive (memberlist's complaints about undecryptable packets). The zero
// Limiter passes one event a second. It is safe for concurrent use.
type Limiter struct {
	// Every is the shortest interval between two passed events; zero
	// means 1 s. Set it before the first Allow.
	Every time.Duration

	mu   sync.Mutex
	last time.Time
	held int
}

// Allow reports whether an event at now may be logged and, when it may, how
// many events were held back since the last one that was.
func (l *Limiter) Allow(now time.Time) (held int, ok bool) {
	every := l.Every
	if every <= 0 {
		every = time.Second
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.last.IsZero() && now.Sub(l.last) < every {
		l.held++
		return 0, false
	}
	held, l.held, l.last = l.held, 0, now
	return held, true
}
