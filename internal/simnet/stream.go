package simnet

import "github.com/goshmem/shmem/transport"

// A context's operations travel on a stream of their own (transport.
// Streamer): its Fence orders only them and its Quiet completes only
// them, as over TCP, so in Lazy mode a Quiet or Fence on the wrong
// context leaves the writes in flight, and a program that relies on it
// fails as it would on a network.

// NewStream opens a completion stream of e's PE for a context.
func (e *engine) NewStream() (transport.Stream, error) {
	n := e.n
	n.mu.Lock()
	defer n.mu.Unlock()
	e.p.streams++
	return &engine{n: n, p: e.p, stream: e.p.streams}, nil
}

// Path returns the stream's path to the peer that p, a path of the same
// PE, reaches.
func (e *engine) Path(p transport.Path) (transport.Path, bool) {
	pa, ok := p.(*path)
	if !ok || pa.p != e.p {
		return nil, false
	}
	if pa.eng == e {
		return pa, true
	}
	n := e.n
	n.mu.Lock()
	defer n.mu.Unlock()
	sp := e.paths[pa.to]
	if sp == nil {
		if e.paths == nil {
			e.paths = map[int32]*path{}
		}
		sp = &path{p: pa.p, to: pa.to, size: pa.size, mappable: pa.mappable, eng: e}
		e.paths[pa.to] = sp
	}
	return sp, true
}

// Close completes what a context's stream still has in flight (a context
// is quieted before its streams close, so normally nothing): its writes
// would otherwise never land. The PE's own engine closes as the PE ends,
// which decides the fate of its writes itself (a dead PE's are lost).
func (e *engine) Close() error {
	if e.stream == 0 {
		return nil
	}
	n := e.n
	n.mu.Lock()
	n.quiet(e, false)
	n.mu.Unlock()
	return nil
}
