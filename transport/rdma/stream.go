package rdma

import (
	"sync/atomic"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
)

// A stream is a further completion stream of a node (an OpenSHMEM
// context): its paths dial lanes of their own, so its frames are numbered,
// acknowledged and fenced apart from the node's and from other streams'.
// Quiet on a stream waits only for its own lanes, and a peer that stalls
// one stream's connection holds up no other stream's Quiet. The paths dial
// on first use, so a stream that never talks to a peer costs it nothing.
type stream struct {
	n   *Node
	eng engine
	// paths maps a node path to this stream's path to the same peer;
	// guarded by n.mu, like the node's own table.
	paths  map[*path]*path
	closed bool
	all    atomic.Pointer[[]*path] // copy-on-write, for Fence and Quiet
}

// makePath builds a path to peer (through via, or -1) completed by eng.
func (n *Node) makePath(eng *engine, peer, via int, addr string) *path {
	p := &path{n: n, eng: eng, peer: peer, via: via}
	p.lanes[small] = newLane(p, false, addr)
	p.lanes[bulk] = newLane(p, true, addr)
	return p
}

// NewStream opens a completion stream on the node (transport.Streamer).
// A closed node refuses with errs.ErrFinalized.
func (e *engine) NewStream() (transport.Stream, error) {
	n := e.n
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil, errs.New("CreateCtx", n.cfg.Rank, errs.NoPE, errs.ErrFinalized, "node closed")
	}
	s := &stream{n: n, paths: map[*path]*path{}}
	s.eng = engine{n: n, st: s}
	n.streams[s] = struct{}{}
	return s, nil
}

// Path returns the stream's path to the peer that p reaches; p must be a
// path of the stream's node.
func (s *stream) Path(p transport.Path) (transport.Path, bool) {
	np, ok := p.(*path)
	if !ok || np.n != s.n || np.eng != &s.n.eng {
		return nil, false
	}
	n := s.n
	n.mu.Lock()
	defer n.mu.Unlock()
	if q, ok := s.paths[np]; ok {
		return q, true
	}
	q := n.makePath(&s.eng, np.peer, np.via, np.lanes[small].addr)
	switch {
	case n.closed || s.closed:
		q.failAll(errs.ErrFinalized, "node or context closed")
	case n.failed[np.peer] || (np.via >= 0 && n.failed[np.via]):
		q.failAll(errs.ErrPEFailed, "PE %d was marked failed", np.peer)
	case np.lanes[small].deadNow():
		// The node's path failed for good (an invalid peer, say): the
		// stream's copy fails the same way.
		q.failAll(np.lanes[small].failErrOr(errs.ErrPEFailed), "path to PE %d failed", np.peer)
	}
	s.paths[np] = q
	list := make([]*path, 0, len(s.paths))
	if old := s.all.Load(); old != nil {
		list = append(list, *old...)
	}
	list = append(list, q)
	s.all.Store(&list)
	return q, true
}

// pathsTo returns the stream's paths to peer, or through it, or all of
// them for -1; the caller holds n.mu.
func (s *stream) pathsTo(peer int) []*path {
	var hit []*path
	for _, q := range s.paths {
		if peer < 0 || q.peer == peer || q.via == peer {
			hit = append(hit, q)
		}
	}
	return hit
}

// Fence orders the stream's writes, per peer.
func (s *stream) Fence() error { return s.eng.Fence() }

// Quiet completes the stream's operations, and no others.
func (s *stream) Quiet() error { return s.eng.Quiet() }

// Close fails the stream's pending operations with errs.ErrFinalized and
// closes its connections; the node goes on. Closing twice does nothing.
func (s *stream) Close() error {
	n := s.n
	n.mu.Lock()
	if s.closed {
		n.mu.Unlock()
		return nil
	}
	s.closed = true
	delete(n.streams, s)
	hit := s.pathsTo(-1)
	n.mu.Unlock()
	for _, q := range hit {
		q.failAll(errs.ErrFinalized, "context destroyed")
	}
	return nil
}
