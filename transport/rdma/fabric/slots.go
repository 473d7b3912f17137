//go:build cgo && goshmem_fabric

package fabric

/*
#include <stdlib.h>
#include "gf.h"
*/
import "C"

import (
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/goshmem/shmem/internal/errs"
)

// A slot is one completion context: the C-side fi_context2 at the same
// index, a registered bounce buffer, and what to do when its completion
// arrives. Slots are allocated once; the hot path only moves their index
// through the free channel.
type slot struct {
	state  atomic.Int32
	kind   uint8
	which  uint8 // counter: 0 write, 1 read
	width  uint8
	code   int // fi errno of the completion, 0 on success, -1 node closed
	result uint64
	done   chan struct{} // cap 1: the completion, for a blocking waiter
	timer  *time.Timer
	bounce []byte // C memory, BounceSize bytes
	dst    []byte // where a get's bounce data goes
	path   *path  // the path that posted it
	op     string
	big    *leak // pinned/registered caller buffer of a large transfer
}

const (
	stFree int32 = iota
	stPosted
	stCompleting // progress goroutine owns the result
	stAbandoned  // the waiter gave up (timeout, failed path); the completion or Close releases the slot
)

const (
	kindBlock    uint8 = iota + 1 // a waiter takes the result (copy of dst done by progress)
	kindAsyncPut                  // medium put through the bounce buffer
	kindAsyncGet                  // GetNBI through the bounce buffer
)

func (n *Node) initSlots() {
	n.slots = make([]slot, n.cfg.Slots)
	n.free = make(chan int32, n.cfg.Slots)
	bs := n.cfg.BounceSize
	all := unsafe.Slice((*byte)(unsafe.Pointer(n.c.bounce)), bs*n.cfg.Slots)
	for i := range n.slots {
		s := &n.slots[i]
		s.done = make(chan struct{}, 1)
		s.timer = time.NewTimer(time.Hour)
		s.timer.Stop()
		s.bounce = all[i*bs : (i+1)*bs : (i+1)*bs]
		n.free <- int32(i)
	}
}

// acquire takes a free slot, waiting up to OpTimeout when all are in
// flight, or until the path fails: a PE whose peer died need not wait for
// slots that operations to that peer hold.
func (n *Node) acquire(op string, p *path) (int32, error) {
	select {
	case i := <-n.free:
		return i, nil
	default:
	}
	t := time.NewTimer(n.cfg.OpTimeout)
	defer t.Stop()
	select {
	case i := <-n.free:
		return i, nil
	case <-n.done:
		return -1, errs.New(op, n.rank(), p.peer, errs.ErrFinalized, "node closed")
	case <-p.dead:
		return -1, p.failedErr(op, "path failed while waiting for a completion slot")
	case <-t.C:
		return -1, errs.New(op, n.rank(), p.peer, errs.ErrTimeout, "no completion slot free within %v (%d in flight)", n.cfg.OpTimeout, n.cfg.Slots)
	}
}

func (n *Node) release(i int32) {
	s := &n.slots[i]
	if s.path != nil {
		s.path.e.inflight.Add(-1)
	}
	s.dst, s.op, s.big, s.path = nil, "", nil, nil
	s.state.Store(stFree)
	n.free <- i
}

// await waits for a blocking slot's completion, then frees the slot.
//
// It gives up without the completion when the path fails (PeerFailed, or
// another operation's failed completion or timeout) and, with the error
// errs.ErrTimeout, after OpTimeout, failing the path. The slot is then
// abandoned: libfabric may still complete it, so it is not reused until
// its completion arrives (the progress goroutine frees it) or Close has
// closed the endpoint. Abandoning is safe when libfabric touches only
// memory the slot owns or keeps pinned: its bounce buffer (a Get's dst is
// filled from it only by a completion that finds the slot still posted,
// so never after the Get returned) or a pinned source being written.
// A read straight into the caller's pinned buffer (big) is not: the NIC
// may write dst after the call returned. Such a read (abandon false)
// keeps waiting on a failed path for its completion (providers complete
// it in error once the connection to the peer breaks), OpTimeout or Close.
func (n *Node) await(i int32, p *path, abandon bool) (uint64, error) {
	s := &n.slots[i]
	// Read before the slot can be abandoned: afterwards its next owner
	// writes them.
	op, which := s.op, s.which
	var dead <-chan struct{}
	if abandon {
		dead = p.dead
	}
	s.timer.Reset(n.cfg.OpTimeout)
	select {
	case <-s.done:
		s.timer.Stop()
	case <-dead:
		s.timer.Stop()
		if s.state.CompareAndSwap(stPosted, stAbandoned) {
			return 0, p.failedErr(op, "abandoned in flight: the path failed")
		}
		<-s.done // the completion won the race: take it
	case <-s.timer.C:
		if s.state.CompareAndSwap(stPosted, stAbandoned) {
			p.e.lost[which].Add(1)
			err := errs.New(op, n.rank(), p.peer, errs.ErrTimeout, "no completion within %v", n.cfg.OpTimeout)
			p.failWith(err)
			return 0, err
		}
		<-s.done
	}
	code, res := s.code, s.result
	n.release(i)
	if code != 0 {
		return 0, n.completionErr(op, p, code)
	}
	return res, nil
}

// completionErr turns a failed completion into an error and fails the peer
// (a provider error on a reliable endpoint means the peer is unreachable).
func (n *Node) completionErr(op string, p *path, code int) error {
	if code < 0 || n.closed.Load() {
		return errs.New(op, n.rank(), p.peer, errs.ErrFinalized, "node closed")
	}
	err := errs.New(op, n.rank(), p.peer, errs.ErrPEFailed, "completion error: %s", fiStrerror(code))
	p.failWith(err)
	return err
}

// progress reads the completion queue until Close. It drives the provider
// (tcp and rxm make progress only inside libfabric calls, on both sides of
// a transfer) and finishes each slot: copies a get's bounce data to its
// destination, wakes the waiter, or frees an asynchronous slot.
func (n *Node) progress() {
	defer close(n.polled)
	runtime.LockOSThread() // the thread sleeps in fi_cq_sread; keep it ours
	defer runtime.UnlockOSThread()
	var idx, code [64]C.int
	logged := false
	for !n.closed.Load() {
		n.pollMu.Lock()
		k := int(C.gf_poll(n.c, 100, &idx[0], &code[0], 64))
		n.pollMu.Unlock()
		if k < 0 {
			if !logged {
				n.log.Error("fabric: reading the completion queue failed", "rank", n.rank(), "err", fiStrerror(k))
				logged = true
			}
			continue
		}
		for j := 0; j < k; j++ {
			n.complete(int(idx[j]), int(code[j]))
		}
	}
}

func (n *Node) complete(i, code int) {
	if i < 0 || i >= len(n.slots) {
		if code != 0 { // an inject operation failed: Quiet reports it through the counters
			n.log.Debug("fabric: completion error without context", "rank", n.rank(), "err", fiStrerror(code))
		}
		return
	}
	s := &n.slots[i]
	if s.big != nil {
		s.big.release()
		s.big = nil
	}
	switch s.kind {
	case kindBlock:
		if !s.state.CompareAndSwap(stPosted, stCompleting) {
			n.release(int32(i)) // abandoned by a waiter that timed out
			return
		}
		s.code = code
		if code == 0 {
			n.finishData(s)
		}
		s.done <- struct{}{}
	case kindAsyncPut, kindAsyncGet:
		get, p := s.kind == kindAsyncGet, s.path
		if code == 0 && get {
			n.copyOut(s)
		}
		if code != 0 {
			n.asyncFailed(s, code)
		}
		n.release(int32(i))
		if get {
			p.e.nbiFinished(p)
		}
	}
}

// copyOut copies a GetNBI's data to its destination unless its path has
// failed: the Quiet that reported the failure may have returned already,
// and its caller may be reusing dst. copying brackets the check and the
// copy, so that waitNBI, once it has seen the failure, can wait for a copy
// that checked before it (both sides use sequentially consistent atomics:
// either the copy sees the failure, or waitNBI sees the copy).
func (n *Node) copyOut(s *slot) {
	p := s.path
	p.copying.Add(1)
	if p.failed.Load() == nil {
		n.finishData(s)
	}
	p.copying.Add(-1)
}

// nbiFinished counts a GetNBI of p as finished and wakes a waiting Quiet.
func (e *engine) nbiFinished(p *path) {
	p.nbi.Add(-1)
	e.nbiPending.Add(-1)
	e.nbiChanged()
}

// nbiChanged wakes every waitNBI to look again.
func (e *engine) nbiChanged() { e.nbiWake.broadcast() }

// finishData moves a completed get or fetch out of the bounce buffer.
func (n *Node) finishData(s *slot) {
	switch {
	case s.width == 4:
		s.result = uint64(*(*uint32)(unsafe.Pointer(&s.bounce[16])))
	case s.width == 8:
		s.result = *(*uint64)(unsafe.Pointer(&s.bounce[16]))
	case s.dst != nil:
		copy(s.dst, s.bounce)
	}
}

func (n *Node) asyncFailed(s *slot, code int) {
	p := s.path
	var err error
	if code > 0 {
		err = n.completionErr(s.op, p, code)
	} else {
		err = errs.New(s.op, n.rank(), p.peer, errs.ErrFinalized, "node closed")
	}
	p.e.asyncErr.CompareAndSwap(nil, &err)
}

// failSlots ends every posted operation at Close, after the endpoint is
// closed (libfabric touches no buffer any more): waiters get
// errs.ErrFinalized, pinned and registered caller buffers are released,
// abandoned slots need nothing more.
func (n *Node) failSlots() {
	for i := range n.slots {
		s := &n.slots[i]
		if s.big != nil {
			s.big.release()
			s.big = nil
		}
		if s.state.Load() != stPosted {
			continue
		}
		switch s.kind {
		case kindBlock:
			if s.state.CompareAndSwap(stPosted, stCompleting) {
				s.code = -1
				s.done <- struct{}{}
			}
		case kindAsyncGet:
			s.path.nbi.Add(-1)
			s.path.e.nbiPending.Add(-1)
		}
	}
	n.eng.nbiChanged()
	n.mu.Lock()
	for e := range n.streams {
		e.nbiChanged()
	}
	n.mu.Unlock()
}

// leak holds a large caller buffer that libfabric reads or writes directly:
// pinned for the cgo rules, and registered when the provider wants local
// registration (FI_MR_LOCAL, e.g. verbs).
type leak struct {
	pin  runtime.Pinner
	mr   *C.struct_fid_mr
	desc unsafe.Pointer
	refs atomic.Int32
}

func (l *leak) release() {
	if l.refs.Add(-1) != 0 {
		return
	}
	if l.mr != nil {
		C.gf_mr_close(l.mr)
		l.mr = nil
	}
	l.pin.Unpin()
}
