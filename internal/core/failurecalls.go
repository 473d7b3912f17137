package core

import "sync"

// failureCalls runs a PE's failure handler (SetFailureHandler) once for
// each rank the PE records failed before the world agreed to finalize:
// one call at a time, in the order recorded, on a goroutine that runs
// while calls are queued and ends when none is. So the handler may block
// or call goshmem without holding up the PE actor that records failures,
// and a PE without failures keeps no goroutine for it.
type failureCalls struct {
	mu      sync.Mutex
	f       func(rank int, reason string)
	handed  map[int]bool // ranks queued for a handler, never queued again
	pending []failureCall
	running bool // a goroutine runs the pending calls
}

type failureCall struct {
	rank   int
	reason string
}

// SetFailureHandler makes f run for each rank recorded failed and not yet
// handed to a handler: at once for those already recorded, and for each
// later one as the PE records it. A failure recorded once every PE has
// reached Finalize is a departure and is not handed over. nil drops the
// calls not yet made; a context sets its PE's handler.
func (p *PE) SetFailureHandler(f func(rank int, reason string)) {
	s := p.s
	c := &s.failureCalls
	c.mu.Lock()
	defer c.mu.Unlock()
	c.f = f
	if f == nil {
		c.pending = nil
		return
	}
	if s.agreed.Load() {
		return
	}
	for r := range p.NPEs() {
		if why := s.failed.Load(r); why != nil {
			c.queue(r, *why)
		}
	}
}

// failed hands rank's failure to the handler, if one is set; the PE
// actor calls it as it records the failure.
func (c *failureCalls) failed(rank int, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.f != nil {
		c.queue(rank, reason)
	}
}

// queue adds a call for rank unless it had one; c.mu is held.
func (c *failureCalls) queue(rank int, reason string) {
	if c.handed[rank] {
		return
	}
	if c.handed == nil {
		c.handed = map[int]bool{}
	}
	c.handed[rank] = true
	c.pending = append(c.pending, failureCall{rank, reason})
	if !c.running {
		c.running = true
		go c.run()
	}
}

// run makes the pending calls, then ends.
func (c *failureCalls) run() {
	for {
		c.mu.Lock()
		if len(c.pending) == 0 || c.f == nil {
			c.pending, c.running = nil, false
			c.mu.Unlock()
			return
		}
		call, f := c.pending[0], c.f
		c.pending = c.pending[1:]
		c.mu.Unlock()
		f(call.rank, call.reason)
	}
}
