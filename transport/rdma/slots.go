package rdma

import (
	"sync"
	"sync/atomic"
	"time"
)

// A slot is one request awaiting its response on a lane. The issuer fills it
// and publishes it with state; whoever reads the lane completes it; the
// waiter (or, for a detached or relayed request, the reader) releases it.
// Slots are reused so that a steady stream of requests allocates nothing.
type slot struct {
	state atomic.Uint32 // see the slot states; the publication point
	gen   atomic.Uint32 // bumped on release so a stale response cannot match
	idx   uint32
	want  uint8  // the response op expected
	dst   []byte // where a get response lands
	old   uint64 // atomic old value or echoed flush sequence
	fail  int    // rank reported failed by a relay, or -1
	// deadline is when the response is overdue (clock ns): OpTimeout after
	// the request was written. Set by the issuer before it publishes.
	deadline int64
	done     chan struct{} // capacity 1: completion news for a waiter in slotWaiting
	timer    *time.Timer

	detached bool // GetNBI: nobody waits; the reader releases and reports errors

	relay   *serverConn // relayed request: the response goes back here
	relayID uint64      // with the original request id
	relayOp uint64      // and the original flush operand
	relayBf *[]byte     // pooled buffer holding a relayed get's data
}

// Slot states. A request's owner that reads the lane itself finds its slot
// slotDone after a read, with nothing handed over; only an owner that
// parks (another party holds the read side) moves it to slotWaiting, and
// then, and only then, the completer also sends on done.
const (
	slotFree uint32 = iota
	slotPending
	slotWaiting // the owner waits on done for the completion
	slotDone    // the response is in; the owner releases the slot
	slotClaimed // a relayed request whose answer is being sent back
)

// slotTable hands out slot ids. It grows to max slots on demand because most
// lanes of a large world carry a handful of requests at a time.
//
// The last released slot is kept in spare, taken and put back with one
// atomic swap each: a lane usually has one request outstanding, and the
// free channel's receive and send cost about 200 instructions per request.
// Acquirers are serialised by the lane's write lock; releases come from
// any goroutine.
type slotTable struct {
	max     int
	spare   atomic.Pointer[slot]
	free    chan uint32
	waiting atomic.Int32 // acquirers blocked on free: releases must feed it
	mu      sync.Mutex   // guards growth
	n       atomic.Int32
	slots   []atomic.Pointer[slot]
}

func newSlotTable(max int) *slotTable {
	return &slotTable{max: max, free: make(chan uint32, max), slots: make([]atomic.Pointer[slot], max)}
}

// acquire returns a free slot, waiting for one while all max are pending.
// It reports false when dead closes or timeout passes first.
func (t *slotTable) acquire(dead <-chan struct{}, timeout time.Duration) (*slot, bool) {
	if s := t.tryAcquire(); s != nil {
		return s, true
	}
	// Registered before the second look: a release that parks its slot in
	// spare then sees the waiter and moves the slot to free (see release).
	t.waiting.Add(1)
	defer t.waiting.Add(-1)
	if s := t.tryAcquire(); s != nil {
		return s, true
	}
	tm := time.NewTimer(timeout) // only when every slot is busy
	defer tm.Stop()
	select {
	case i := <-t.free:
		return t.slots[i].Load(), true
	case <-dead:
	case <-tm.C:
	}
	return nil, false
}

// tryAcquire returns a free slot, or nil while all max are pending.
func (t *slotTable) tryAcquire() *slot {
	if s := t.spare.Swap(nil); s != nil {
		return s
	}
	select {
	case i := <-t.free:
		return t.slots[i].Load()
	default:
	}
	return t.grow()
}

func (t *slotTable) grow() *slot {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := int(t.n.Load())
	if n >= t.max {
		return nil
	}
	s := &slot{idx: uint32(n), done: make(chan struct{}, 1), timer: time.NewTimer(time.Hour), fail: -1}
	s.timer.Stop()
	t.slots[n].Store(s)
	t.n.Store(int32(n + 1))
	return s
}

// id is the request id naming s on the wire.
func (s *slot) id() uint64 { return uint64(s.gen.Load())<<32 | uint64(s.idx) }

// lookup returns the pending slot that id names, or nil.
func (t *slotTable) lookup(id uint64) *slot {
	i := uint32(id)
	if int64(i) >= int64(t.n.Load()) {
		return nil
	}
	s := t.slots[i].Load()
	if s == nil || s.gen.Load() != uint32(id>>32) {
		return nil
	}
	if st := s.state.Load(); st != slotPending && st != slotWaiting {
		return nil
	}
	return s
}

// release makes s reusable. Only its current owner calls it.
func (t *slotTable) release(s *slot) {
	if s.relay != nil { // written only when set: failRelays reads it unlocked
		s.relay, s.relayBf = nil, nil
	}
	s.dst = nil
	s.detached, s.fail, s.old = false, -1, 0
	s.gen.Add(1)
	s.state.Store(slotFree)
	if t.spare.CompareAndSwap(nil, s) {
		// An acquirer that registered before this CAS and still found
		// spare empty is blocked on free: hand it a slot there. (It
		// registers, then looks at spare; this stores, then looks at
		// waiting: one of the two sees the other.)
		if t.waiting.Load() > 0 {
			if s := t.spare.Swap(nil); s != nil {
				t.free <- s.idx
			}
		}
		return
	}
	t.free <- s.idx // never blocks: capacity is max
}

// releaseBuf returns a relayed get's buffer to the node's pool and releases s.
func (t *slotTable) releaseBuf(s *slot, n *Node) {
	if s.relayBf != nil {
		n.putBuf(s.relayBf)
	}
	t.release(s)
}
