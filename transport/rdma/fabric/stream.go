//go:build cgo && goshmem_fabric

package fabric

/*
#include <stdlib.h>
#include "gf.h"
*/
import "C"

import (
	"sync/atomic"
	"unsafe"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
)

// A stream is a further completion stream of a node (an OpenSHMEM
// context, transport.Streamer): an endpoint of its own, bound to counters
// of its own, so its Quiet counts only its own operations, and, on
// connection-based providers (rxm), connections of its own to each peer,
// so a peer that stalls the node's traffic holds up no stream that did not
// write to it. It shares the node's address vector (the same fi_addr
// reaches a peer from every endpoint), completion queue and progress
// goroutine, completion slots and heap and statics registrations; a
// peer's heap window (size and key, GrowHeap) is shared with the node's
// path to it.
type stream struct {
	n      *Node
	eng    engine
	paths  map[*path]*path         // node path -> the stream's; guarded by n.mu
	all    atomic.Pointer[[]*path] // copy-on-write, read without a lock by Quiet
	closed bool                    // guarded by n.mu
}

// NewStream opens a completion stream on the node: an endpoint with its
// own counters (transport.Streamer). It fails with errs.ErrFinalized once
// the node is closed and errs.ErrOutOfMemory when the provider refuses
// another endpoint (its message names the step and fi_strerror's text).
func (e *engine) NewStream() (transport.Stream, error) {
	n := e.n
	if err := n.enter("CreateCtx", errs.NoPE); err != nil {
		return nil, err
	}
	defer n.exit()
	ep, err := n.streamEP()
	if err != nil {
		return nil, err
	}
	s := &stream{n: n, paths: map[*path]*path{}}
	s.eng = engine{n: n, ep: ep, st: s}
	// A reused endpoint's counters go on from where its last stream left
	// them, every operation counted (Close pools only such endpoints).
	for which := 0; which < 2; which++ {
		k := C.gf_cntr_wait(n.c, ep, C.int(which), 0, -1)
		s.eng.issued[which].Store(uint64(k.ok) + uint64(k.bad))
		s.eng.errSeen[which].Store(uint64(k.bad))
	}
	n.mu.Lock()
	n.streams[&s.eng] = struct{}{}
	n.mu.Unlock()
	return s, nil
}

// streamEP returns an endpoint for a new stream: one a destroyed stream
// left idle, or a new one. Endpoints are never closed before the node:
// closing one of several endpoints bound to a completion queue leaves
// tcp;ofi_rxm (libfabric 1.17) reading freed memory in the next
// fi_cq_sread, so a destroyed stream's endpoint waits for the next
// stream instead, and the endpoints a node holds are as many as the
// contexts it ever had alive at once. The caller is inside the node.
func (n *Node) streamEP() (*C.gf_ep, error) {
	n.mu.Lock()
	if k := len(n.idle); k > 0 {
		ep := n.idle[k-1]
		n.idle = n.idle[:k-1]
		n.mu.Unlock()
		return ep, nil
	}
	n.mu.Unlock()
	ep := (*C.gf_ep)(C.calloc(1, C.size_t(unsafe.Sizeof(C.gf_ep{}))))
	if ep == nil {
		return nil, errs.New("CreateCtx", n.rank(), errs.NoPE, errs.ErrOutOfMemory, "allocating an endpoint")
	}
	// gf_ep_open sets n.c.step, which another NewStream may set at the
	// same time: the message then names the wrong step, nothing worse.
	resume := n.pausePoll()
	rc := C.gf_ep_open(n.c, ep)
	resume()
	if rc != 0 {
		C.free(unsafe.Pointer(ep))
		return nil, errs.New("CreateCtx", n.rank(), errs.NoPE, errs.ErrOutOfMemory,
			"opening a stream endpoint (provider %s): %s", n.prov, fiStrerror(int(rc)))
	}
	return ep, nil
}

// Path returns the stream's path to the peer that p (a path of the
// stream's node) reaches: made on first use, with the node path's address
// heap window and statics region and, if the node's path failed, the
// same failure.
func (s *stream) Path(p transport.Path) (transport.Path, bool) {
	np, ok := p.(*path)
	if !ok || np.n != s.n || np.e != &s.n.eng {
		return nil, false
	}
	n := s.n
	n.mu.Lock()
	defer n.mu.Unlock()
	if q, ok := s.paths[np]; ok {
		return q, true
	}
	q := &path{n: n, e: &s.eng, peer: np.peer, fa: np.fa, base: np.base, win: np.win, st: np.st, dead: make(chan struct{})}
	switch {
	case s.closed:
		q.fail(errs.ErrFinalized, "CreateCtx", "context destroyed")
	case n.gone[np.peer] != nil:
		q.failWith(n.gone[np.peer])
	case np.failed.Load() != nil:
		q.failWith(*np.failed.Load())
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

// streamPaths returns every live stream's path to peer; the caller holds
// n.mu.
func (n *Node) streamPaths(peer int) []*path {
	var hit []*path
	for e := range n.streams {
		if all := e.st.all.Load(); all != nil {
			for _, p := range *all {
				if p.peer == peer {
					hit = append(hit, p)
				}
			}
		}
	}
	return hit
}

// Fence orders the stream's writes, per peer.
func (s *stream) Fence() error { return s.eng.Fence() }

// Quiet completes the stream's operations, and no others.
func (s *stream) Quiet() error { return s.eng.Quiet() }

// Close destroys the stream: its paths fail with errs.ErrFinalized, and
// so do the operations waiting on them (the runtime quiets a context
// before it destroys it, so normally there are none). Its endpoint goes
// to the next stream when nothing of it is in flight (streamEP), else it
// stays out of use until the node closes it (libfabric may still
// complete those operations into the slots). The node goes on. Closing
// twice does nothing.
func (s *stream) Close() error {
	n := s.n
	n.mu.Lock()
	if s.closed {
		n.mu.Unlock()
		return nil
	}
	s.closed = true
	var hit []*path
	if all := s.all.Load(); all != nil {
		hit = *all
	}
	n.mu.Unlock()
	for _, q := range hit {
		q.fail(errs.ErrFinalized, "DestroyCtx", "context destroyed")
	}
	e := &s.eng
	n.life.Lock() // nobody is inside libfabric on the endpoint after this
	defer n.life.Unlock()
	e.closed.Store(true) // and nobody enters it again (engine.enter)
	if n.closed.Load() || e.inflight.Load() > 0 || !e.counted() {
		return nil // the node's Close closes the endpoint
	}
	n.mu.Lock()
	delete(n.streams, e)
	n.idle = append(n.idle, e.ep)
	n.mu.Unlock()
	return nil
}

// counted reports whether both counters have counted every operation
// posted on the engine: then no completion of its endpoint is pending.
// The caller holds the node's write side or read side.
func (e *engine) counted() bool {
	for which := 0; which < 2; which++ {
		k := C.gf_cntr_wait(e.n.c, e.ep, C.int(which), 0, -1)
		if !reached(uint64(k.ok)+uint64(k.bad)+e.lost[which].Load(), e.issued[which].Load()) {
			return false
		}
		if e.lost[which].Load() > 0 {
			return false // a timed-out operation may still complete late
		}
	}
	return true
}

// pausePoll keeps the progress goroutine out of the completion queue
// until the returned func runs: reading the queue progresses every
// endpoint bound to it, so an endpoint is bound to it only while nobody
// reads it. The goroutine is woken from its wait, so the pause costs at
// most one batch of completions. The caller is inside the node.
func (n *Node) pausePoll() func() {
	C.gf_wake(n.c)
	n.pollMu.Lock()
	return n.pollMu.Unlock
}

// freeEP closes a stream endpoint and its counters and frees them, at
// the node's Close (teardown), when nothing runs in libfabric any more.
func freeEP(ep *C.gf_ep) {
	C.gf_ep_close(ep)
	C.free(unsafe.Pointer(ep))
}
