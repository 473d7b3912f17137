//go:build cgo && goshmem_fabric

package fabric

/*
#include "gf.h"
*/
import "C"

import (
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
)

// path is the transport.Path to one connected peer.
type path struct {
	n    *Node
	e    *engine // the node's, or the stream's the path belongs to
	peer int
	fa   C.fi_addr_t
	base uint64     // added to offsets: the peer's heap address under FI_MR_VIRT_ADDR, else 0
	win  *window    // the peer's registered heap: size and key, changed by UpdatePeers
	st   staticsWin // the peer's registered statics region, from transport.StaticsBase

	failed    atomic.Pointer[error]
	dead      chan struct{} // closed when failed is set: wakes the path's waiters (await, acquire)
	fenceSeen atomic.Uint64 // the node's fence epoch this path has honoured
	lastW     atomic.Uint64 // global sequence number of this path's last write

	// nbi counts this path's GetNBIs not yet finished (copied out, or
	// skipped because the path failed); copying counts completions between
	// their failure check and the end of their copy (see Node.copyOut).
	nbi     atomic.Int64
	copying atomic.Int32
}

// staticsWin is a peer's registered statics region as this node addresses
// it. The region never grows, so it is fixed at Connect and read without
// a lock.
type staticsWin struct {
	base uint64 // added to region offsets: the region's address under FI_MR_VIRT_ADDR, else 0
	size uint64 // 0: the peer has no region
	key  uint64
}

// writeFlags ask for delivery completion: a counted write is in the peer's
// memory, which is what Quiet promises (transmit completion is not enough).
const writeFlags = C.FI_DELIVERY_COMPLETE

func (p *path) fail(sentinel error, op, format string, args ...any) {
	p.failWith(errs.New(op, p.n.rank(), p.peer, sentinel, format, args...))
}

// failWith records the path's first failure and wakes every operation
// waiting on the path, which then ends with that failure (see await).
func (p *path) failWith(err error) {
	if p.failed.CompareAndSwap(nil, &err) {
		close(p.dead)
		p.e.nbiChanged() // a Quiet waiting for this path's GetNBIs stops waiting
	}
}

// failedErr is the error of an operation ended by the path's failure: it
// wraps the failure (errs.ErrPEFailed after PeerFailed) and names the peer.
func (p *path) failedErr(op, detail string) error {
	return &errs.Error{Op: op, PE: p.n.rank(), Target: p.peer, Detail: detail, Err: *p.failed.Load()}
}

// check refuses operations on a closed node or a failed path, and ranges
// outside the peer's registered region that off lies in: its heap, or its
// statics region from transport.StaticsBase (the provider would fail them
// less clearly, or not at all). The closed check here names the peer;
// enter still guards every call into libfabric against a concurrent Close.
func (p *path) check(op string, off uint64, n int) error {
	if p.n.closed.Load() {
		return errs.New(op, p.n.rank(), p.peer, errs.ErrFinalized, "node closed")
	}
	if e := p.failed.Load(); e != nil {
		return &errs.Error{Op: op, PE: p.n.rank(), Target: p.peer, Detail: "path failed earlier", Err: *e}
	}
	if off >= transport.StaticsBase {
		return p.checkStatics(op, off-transport.StaticsBase, n)
	}
	if size := int(p.win.size.Load()); !transport.InRange(size, off, n) {
		return errs.New(op, p.n.rank(), p.peer, errs.ErrInvalidArgument, "%d bytes at offset %d outside the %d-byte heap", n, off, size)
	}
	return nil
}

// checkStatics is check's range check for x, an offset into the peer's
// statics region.
func (p *path) checkStatics(op string, x uint64, n int) error {
	if p.st.size == 0 {
		return errs.New(op, p.n.rank(), p.peer, errs.ErrInvalidArgument,
			"%d bytes at offset %d of the statics region: PE %d registered none", n, x, p.peer)
	}
	if !transport.InRange(int(p.st.size), x, n) {
		return errs.New(op, p.n.rank(), p.peer, errs.ErrInvalidArgument,
			"%d bytes at offset %d outside the %d-byte statics region", n, x, p.st.size)
	}
	return nil
}

// remote is where libfabric finds off, an offset check has passed: the
// address (relative to the registration unless FI_MR_VIRT_ADDR) and key of
// the peer's heap, or of its statics region from transport.StaticsBase.
// The heap's key is loaded after check loaded its size (see window).
func (p *path) remote(off uint64) (raddr, key C.uint64_t) {
	if off < transport.StaticsBase {
		return C.uint64_t(p.base + off), C.uint64_t(p.win.key.Load())
	}
	return C.uint64_t(p.st.base + (off - transport.StaticsBase)), C.uint64_t(p.st.key)
}

// dirty reports whether this path has writes not yet known complete.
func (p *path) dirty() bool { return p.lastW.Load() > p.e.wdone.Load() }

// ordered keeps Fence's promise before a write: the first write to this
// path after a Fence waits for the path's earlier writes (quiet-before-next;
// no provider-specific FI_FENCE semantics are relied on).
func (p *path) ordered(op string) error {
	e := p.e.fenceEpoch.Load()
	if p.fenceSeen.Load() == e {
		return nil
	}
	if p.dirty() {
		if err := p.e.quietWrites(op); err != nil {
			return err
		}
	}
	p.fenceSeen.Store(e)
	return nil
}

// readAfterWrite makes a get or a fetching atomic see this PE's earlier
// writes to the peer, as the TCP provider does.
func (p *path) readAfterWrite(op string) error {
	if p.dirty() {
		return p.e.quietWrites(op)
	}
	return nil
}

// noteWrite counts a write before it is posted: issued first, then the
// sequence number, so a Quiet that sees the number waits for the write.
func (p *path) noteWrite() {
	p.e.issued[0].Add(1)
	p.lastW.Store(p.e.wseq.Add(1))
}

// again handles FI_EAGAIN (provider queue full): leave libfabric, let the
// progress goroutine drain completions, and retry until OpTimeout, until
// the path fails, or for queueHeldGrace once any peer has failed.
func (p *path) again(deadline *time.Time, op string) error {
	p.n.exit()
	if e := p.failed.Load(); e != nil {
		// A peer that is gone can keep the queue full (rxm retrying the
		// connection) until OpTimeout; PeerFailed ends the wait.
		return &errs.Error{Op: op, PE: p.n.rank(), Target: p.peer, Detail: "path failed while the provider queue was full", Err: *e}
	}
	now := time.Now()
	if deadline.IsZero() {
		*deadline = now.Add(p.n.cfg.OpTimeout)
	} else if now.After(*deadline) {
		return errs.New(op, p.n.rank(), p.peer, errs.ErrTimeout, "provider queue full for %v", p.n.cfg.OpTimeout)
	}
	firstRefused := deadline.Add(-p.n.cfg.OpTimeout)
	if e := p.n.anyFailed.Load(); e != nil && now.After(firstRefused.Add(queueHeldGrace)) {
		// The endpoint's queue is shared by every peer: operations to a
		// dead one that the provider keeps retrying (the sockets
		// provider's manual progress, rxm's reconnects) can hold it full
		// for a live peer too. The world has a failure to report; waiting
		// out OpTimeout would only hide it.
		return &errs.Error{Op: op, PE: p.n.rank(), Target: p.peer, Detail: "provider queue held full after a peer failed", Err: *e}
	}
	runtime.Gosched()
	return p.e.enter(op, p.peer)
}

// queueHeldGrace is how long a post refused for a full queue keeps
// retrying once some peer has failed: long enough for a queue that drains
// by itself (a burst of puts), short against OpTimeout.
const queueHeldGrace = 100 * time.Millisecond

// retry calls post until libfabric takes the operation, waiting out a full
// queue for at most OpTimeout, and leaves the node's section (n.exit)
// whatever happens. On an error the caller undoes its bookkeeping.
func (p *path) retry(op, call string, post func() C.ssize_t) error {
	var deadline time.Time
	for {
		rc := post()
		if rc == 0 {
			p.n.exit()
			return nil
		}
		if rc != -C.FI_EAGAIN {
			p.n.exit()
			return p.postErr(op, call, rc)
		}
		if err := p.again(&deadline, op); err != nil {
			return err // again has left the section
		}
	}
}

func (p *path) postErr(op, call string, rc C.ssize_t) error {
	return errs.New(op, p.n.rank(), p.peer, errs.ErrPEFailed, "%s: %s", call, fiStrerror(int(rc)))
}

// Put writes src to the peer's heap (or statics region) at off and
// returns once src is reusable: up to the provider's inject size it is
// copied by libfabric, up to BounceSize into a registered bounce buffer;
// larger sources are pinned and the call waits for their completion.
func (p *path) Put(off uint64, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	return p.write(off, src, "Put")
}

func (p *path) write(off uint64, src []byte, op string) error {
	if err := p.check(op, off, len(src)); err != nil {
		return err
	}
	if err := p.ordered(op); err != nil {
		return err
	}
	switch {
	case len(src) <= p.n.inject:
		return p.injectPut(off, src, op)
	case len(src) <= p.n.cfg.BounceSize:
		return p.bouncePut(off, src, op)
	}
	return p.big(off, src, true, op)
}

func (p *path) injectPut(off uint64, src []byte, op string) error {
	n := p.n
	if err := p.e.enter(op, p.peer); err != nil {
		return err
	}
	p.noteWrite()
	raddr, key := p.remote(off)
	err := p.retry(op, "fi_writemsg(inject)", func() C.ssize_t {
		// src is Go memory: allowed because FI_INJECT copies it before returning.
		return C.gf_write(n.c, p.e.ep, unsafe.Pointer(unsafe.SliceData(src)), C.size_t(len(src)), nil, p.fa,
			raddr, key, -1, C.FI_INJECT|writeFlags)
	})
	if err != nil {
		p.e.issued[0].Add(^uint64(0))
	}
	return err
}

// req is one posting call; it lives on the caller's stack.
type req struct {
	code uint8  // reqWrite, reqRead, reqFetch
	src  []byte // copied into the slot's bounce buffer once the node is entered
	buf  unsafe.Pointer
	len  int
	desc unsafe.Pointer
	off  uint64
	fop  C.int
	dt   C.int
	cmp  C.int
}

const (
	reqWrite uint8 = iota + 1
	reqRead
	reqFetch
)

func (p *path) issue(r *req, s *slot, i int32) C.ssize_t {
	n := p.n
	raddr, key := p.remote(r.off)
	switch r.code {
	case reqWrite:
		return C.gf_write(n.c, p.e.ep, r.buf, C.size_t(r.len), r.desc, p.fa, raddr, key, C.int(i), C.FI_COMPLETION|writeFlags)
	case reqRead:
		return C.gf_read(n.c, p.e.ep, r.buf, C.size_t(r.len), r.desc, p.fa, raddr, key, C.int(i), C.FI_COMPLETION)
	}
	return C.gf_atomic_fetch(n.c, p.e.ep, r.fop, r.dt, r.cmp, p.fa, raddr, key, C.int(i), C.size_t(n.cfg.BounceSize), C.FI_COMPLETION)
}

// post starts the operation of slot i (set up by the caller) and undoes the
// bookkeeping when libfabric refuses it.
func (p *path) post(i int32, op string, r *req) error {
	n := p.n
	s := &n.slots[i]
	if err := p.e.enter(op, p.peer); err != nil {
		n.release(i)
		return err
	}
	// The bounce buffer is C memory that Close frees: fill it only inside
	// the node's read side.
	copy(s.bounce, r.src)
	s.state.Store(stPosted)
	p.e.issued[s.which].Add(1)
	if s.which == 0 {
		p.lastW.Store(p.e.wseq.Add(1))
	}
	err := p.retry(op, "posting", func() C.ssize_t { return p.issue(r, s, i) })
	if err != nil {
		p.e.issued[s.which].Add(^uint64(0))
		s.big = nil
		n.release(i)
	}
	return err
}

func (p *path) setup(i int32, kind, which uint8, op string) *slot {
	s := &p.n.slots[i]
	s.kind, s.which, s.width, s.path, s.op, s.code = kind, which, 0, p, op, 0
	p.e.inflight.Add(1) // until release: a stream with none in flight can close its endpoint
	return s
}

func (p *path) bouncePut(off uint64, src []byte, op string) error {
	i, err := p.n.acquire(op, p)
	if err != nil {
		return err
	}
	s := p.setup(i, kindAsyncPut, 0, op)
	r := req{code: reqWrite, src: src, buf: unsafe.Pointer(&s.bounce[0]), len: len(src), desc: p.n.bounceDesc, off: off}
	return p.post(i, op, &r)
}

// Get fills dst from the peer's heap (or statics region) at off.
func (p *path) Get(dst []byte, off uint64) error { return p.get(dst, off, false, "Get") }

// GetNBI starts a get that the next Quiet completes. Gets larger than
// BounceSize complete before GetNBI returns (allowed: NBI only permits
// returning early).
func (p *path) GetNBI(dst []byte, off uint64) error { return p.get(dst, off, true, "GetNBI") }

// get reads dst through a slot's bounce buffer, or straight into dst past
// BounceSize; with nbi the next Quiet waits for the bounce read instead.
func (p *path) get(dst []byte, off uint64, nbi bool, op string) error {
	if len(dst) == 0 {
		return nil
	}
	if err := p.check(op, off, len(dst)); err != nil {
		return err
	}
	if err := p.readAfterWrite(op); err != nil {
		return err
	}
	if len(dst) > p.n.cfg.BounceSize {
		return p.big(off, dst, false, op)
	}
	i, err := p.n.acquire(op, p)
	if err != nil {
		return err
	}
	kind := kindBlock
	if nbi {
		kind = kindAsyncGet
	}
	s := p.setup(i, kind, 1, op)
	s.dst = dst
	if nbi {
		p.nbi.Add(1)
		p.e.nbiPending.Add(1)
	}
	r := req{code: reqRead, buf: unsafe.Pointer(&s.bounce[0]), len: len(dst), desc: p.n.bounceDesc, off: off}
	if err := p.post(i, op, &r); err != nil {
		if nbi {
			p.nbi.Add(-1)
			p.e.nbiPending.Add(-1)
		}
		return err
	}
	if nbi {
		return nil
	}
	_, err = p.n.await(i, p, true)
	return err
}

// big moves a buffer larger than BounceSize directly: it is pinned (and
// registered under FI_MR_LOCAL) for the transfer, sent in chunks of at most
// the provider's message size with up to 16 in flight, and the call waits
// for all of them. A chunk given up (OpTimeout; for writes also a failed
// path, see await) keeps the buffer pinned until its completion arrives or
// the node closes.
func (p *path) big(off uint64, buf []byte, write bool, op string) error {
	n := p.n
	l := &leak{}
	l.pin.Pin(unsafe.SliceData(buf))
	l.refs.Store(1) // the call's own reference
	if n.mrLocal {
		access := C.uint64_t(C.FI_READ)
		if write {
			access = C.FI_WRITE
		}
		var desc unsafe.Pointer
		if err := n.enter(op, p.peer); err != nil {
			l.release()
			return err
		}
		rc := C.gf_mr_reg_local(n.c, unsafe.Pointer(unsafe.SliceData(buf)), C.size_t(len(buf)), access,
			C.uint64_t(1<<32+n.keys.Add(1)), &l.mr, &desc)
		n.exit()
		if rc != 0 {
			l.release()
			return errs.New(op, n.rank(), p.peer, errs.ErrOutOfMemory, "fi_mr_reg of %d bytes: %s", len(buf), fiStrerror(int(rc)))
		}
		l.desc = desc
	}
	defer l.release()
	which := uint8(1)
	if write {
		which = 0
	}
	var ring [16]int32
	issued, waited := 0, 0
	var first error
	for pos := 0; pos < len(buf) || waited < issued; {
		if pos < len(buf) && issued-waited < len(ring) && first == nil {
			c := min(len(buf)-pos, n.maxMsg)
			i, err := n.acquire(op, p)
			if err != nil {
				first, pos = err, len(buf)
				continue
			}
			s := p.setup(i, kindBlock, which, op)
			s.big = l
			l.refs.Add(1)
			r := req{code: reqRead, buf: unsafe.Pointer(&buf[pos]), len: c, desc: l.desc, off: off + uint64(pos)}
			if write {
				r.code = reqWrite
			}
			err = p.post(i, op, &r) // buf is pinned above
			if err != nil {
				l.refs.Add(-1) // post dropped the slot's reference
				first, pos = err, len(buf)
				continue
			}
			ring[issued%len(ring)] = i
			issued++
			pos += c
			continue
		}
		if waited == issued {
			break
		}
		if _, err := n.await(ring[waited%len(ring)], p, write); err != nil && first == nil {
			first = err
		}
		waited++
	}
	return first
}

// Ptr returns nil: the peer's memory is reached through the NIC.
func (p *path) Ptr(off uint64, n int) []byte { return nil }

// Engine returns the engine that completes the path's operations: the
// node's, or its stream's.
func (p *path) Engine() transport.Engine { return p.e }
