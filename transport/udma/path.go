package udma

import (
	"encoding/binary"
	"sync/atomic"
	"unsafe"

	"github.com/goshmem/shmem/transport"
)

// Path is the load/store path to a peer whose heap is mapped into this
// process: a put is a copy into the mapping, an atomic is a hardware atomic
// on the shared word. Every operation is complete when it returns, so Quiet
// has nothing to wait for.
type Path struct {
	mem []byte // the peer's heap, as mapped here
	// wordEnd is len(mem)-7, or 0 when mem holds no word: the offsets
	// below it are those of a whole 8-byte word (see word).
	wordEnd uint64
	// waiters is the peer's FutexBell's count of armed waiters (always a
	// FutexBell between processes), which ring tests inline; for another
	// Bell, a word of the path's that stays 1, so every ring goes to the
	// Bell.
	waiters *uint32
	// dataWaiters is the peer's count of data waiters (FutexBell.data),
	// which a plain put tests instead of waiters; waiters when the bell
	// has none.
	dataWaiters *uint32
	bell        transport.Bell // the peer's bell
	fb          *FutexBell     // bell, when it is a FutexBell
	ranger      rangeRinger    // bell, when it tells waiters apart by word
	mappable    bool           // whether Ptr may hand the mapping to the user
	fence       *atomic.Uint64 // a word private to the writing PE (see publish)
}

// NewPath returns the path to a peer whose heap is mem and whose waiters
// wait on bell. fence is a word private to the calling PE. mappable says
// whether the peer counts as on this PE's node for Ptr.
func NewPath(mem []byte, bell transport.Bell, fence *atomic.Uint64, mappable bool) *Path {
	// The capacity is cut to the length: Go's bounds checks compare a
	// slice expression with the capacity, and memory past a heap's end is
	// not the peer's heap.
	p := &Path{mem: mem[:len(mem):len(mem)], bell: bell, fence: fence, mappable: mappable}
	if len(mem) >= 8 {
		p.wordEnd = uint64(len(mem)) - 7
	}
	p.ranger, _ = bell.(rangeRinger)
	if fb, ok := bell.(*FutexBell); ok {
		p.fb, p.waiters = fb, fb.waiters
	} else {
		one := uint32(1)
		p.waiters = &one
	}
	p.dataWaiters = p.waiters
	if p.fb != nil && p.fb.data != nil {
		p.dataWaiters = p.fb.data
	}
	return p
}

// rangeRinger is a Bell that wakes only the waiters a write of the heap
// bytes [lo, hi) concerns (transport.LocalBell, the simulator's and a
// network PE's own): a PE waiting in a barrier then sleeps through the
// puts aimed at its other words, which otherwise woke it on every one (a
// simulated 8-byte put beside a peer in BarrierAll: about 100 ns, with a
// channel send and a wake-up each, against 15).
type rangeRinger interface {
	RingRange(lo, hi uint64) bool
}

// ring rings the peer's bell for a write of the bytes [off, off+n). A
// FutexBell is called directly, not through the interface, so that its
// common case (nobody armed: one load) inlines into every operation.
func (p *Path) ring(off, n uint64) {
	if atomic.LoadUint32(p.waiters) != 0 {
		p.ringArmed(off, off+n)
	}
}

// ringArmed is ring past its common case, for the bytes [lo, hi).
func (p *Path) ringArmed(lo, hi uint64) {
	switch {
	case p.fb != nil:
		p.fb.wake()
	case p.ranger != nil:
		p.ranger.RingRange(lo, hi)
	default:
		p.bell.Ring()
	}
}

// publish makes the preceding plain stores, of the bytes [off, off+n),
// visible before it reads whether the peer has data waiters: the locked
// add is a full barrier on a line no other PE touches, so an arming waiter
// and this write never miss each other. Waiters armed with ArmSync (a team
// operation's) wait for a signal or an atomic, never for these bytes
// alone, and are not woken.
func (p *Path) publish(off, n uint64) {
	p.fence.Add(1)
	if atomic.LoadUint32(p.dataWaiters) != 0 {
		p.ringArmed(off, off+n)
	}
}

// Put copies src into the peer's heap at off.
func (p *Path) Put(off uint64, src []byte) error {
	if len(src) == 8 && off%8 == 0 {
		// One aligned word, the common flag case: a single atomic store is
		// both the copy and the barrier.
		atomic.StoreUint64(transport.Word64(p.mem, off), binary.NativeEndian.Uint64(src))
		p.ring(off, 8)
		return nil
	}
	transport.Copy(p.mem[off:off+uint64(len(src))], src)
	p.publish(off, uint64(len(src)))
	return nil
}

// The word operations below are the root package's fast path for an
// 8-byte element (core.PE.Mapped): each is one instruction on the peer's
// word, small enough to inline into the operation. off must be a
// multiple of 8 inside the mapping (a bad one panics in a bounds check).
// Those that write do not ring the peer's bell, so that they inline: the
// caller must call RingWord after them, as every other write of the path
// rings.

// Write64 stores v in the word at off: an 8-byte Put or P, AtomicSet.
// Call RingWord after it.
func (p *Path) Write64(off, v uint64) {
	atomic.StoreUint64(p.word(off), v)
}

// Load64 returns the word at off: an 8-byte Get or G, AtomicFetch.
func (p *Path) Load64(off uint64) uint64 {
	return atomic.LoadUint64(p.word(off))
}

// FetchAdd64 adds v to the word at off and returns its previous value.
// Call RingWord after it.
func (p *Path) FetchAdd64(off, v uint64) uint64 {
	return atomic.AddUint64(p.word(off), v) - v
}

// CompareSwap64 stores v in the word at off if it holds cond, and
// returns its previous value either way. Call Ring after it.
func (p *Path) CompareSwap64(off, cond, v uint64) uint64 {
	return transport.CAS64(p.word(off), cond, v)
}

// word returns the word at off in the mapping: one comparison (Go's
// slice expression makes two), and past the end the same panic as
// mem[off:off+8].
func (p *Path) word(off uint64) *uint64 {
	if off >= p.wordEnd {
		p.outside(off)
	}
	return (*uint64)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(p.mem)), off))
}

// outside panics in the bounds check of a word at off, which lies
// outside the mapping.
func (p *Path) outside(off uint64) { _ = p.mem[off : off+8] }

// RingWord wakes the peer's waiters the word at off concerns, if any is
// armed, after a word operation that wrote it: one load when none is, and
// it inlines.
func (p *Path) RingWord(off uint64) { p.ring(off, 8) }

// Get copies from the peer's heap at off into dst.
func (p *Path) Get(dst []byte, off uint64) error {
	if len(dst) == 8 {
		// One word, the common small get: a single load and store, as the
		// copy would do, without its calls.
		binary.LittleEndian.PutUint64(dst, binary.LittleEndian.Uint64(p.mem[off:off+8]))
		return nil
	}
	transport.Copy(dst, p.mem[off:off+uint64(len(dst))])
	return nil
}

// GetNBI is Get: the copy is done on return, which Quiet permits.
func (p *Path) GetNBI(dst []byte, off uint64) error { return p.Get(dst, off) }

// Atomic applies op to the peer's word at off.
func (p *Path) Atomic(op transport.AtomicOp, width int, off uint64, operand, cond uint64) (uint64, error) {
	if width == 8 {
		// The common 8-byte atomics as one instruction each, without
		// ApplyAtomic's two calls and switch.
		switch op {
		case transport.AtomicFetch:
			return atomic.LoadUint64(transport.Word64(p.mem, off)), nil
		case transport.AtomicFetchAdd:
			old := atomic.AddUint64(transport.Word64(p.mem, off), operand) - operand
			p.ring(off, 8)
			return old, nil
		case transport.AtomicCompareSwap:
			old := transport.CAS64(transport.Word64(p.mem, off), cond, operand)
			p.ring(off, 8)
			return old, nil
		}
	}
	old := transport.ApplyAtomic(p.mem, op, width, off, operand, cond)
	if op != transport.AtomicFetch {
		p.ring(off, uint64(width))
	}
	return old, nil
}

// AtomicPost applies a non-fetching op at once.
func (p *Path) AtomicPost(op transport.AtomicOp, width int, off uint64, operand uint64) error {
	if width == 8 && op == transport.AtomicFetchAdd {
		// The common post (AtomicAdd, Inc, every barrier round) as one
		// LOCK XADD, without ApplyAtomic's two calls and switch.
		atomic.AddUint64(p.word(off), operand)
		p.ring(off, 8)
		return nil
	}
	transport.ApplyAtomic(p.mem, op, width, off, operand, 0)
	p.ring(off, uint64(width))
	return nil
}

// PutSignal copies src, then updates the signal word with an atomic that
// orders after the copy.
func (p *Path) PutSignal(off uint64, src []byte, sigOff uint64, value uint64, op transport.SignalOp) error {
	_ = p.mem[sigOff : sigOff+8] // a bad signal offset panics before the data is copied
	transport.Copy(p.mem[off:off+uint64(len(src))], src)
	transport.ApplySignal(p.mem, sigOff, value, op)
	// One range over both, the data's and the signal's: each's waiters wake.
	lo := min(off, sigOff)
	p.ring(lo, max(off+uint64(len(src)), sigOff+8)-lo)
	return nil
}

// Ptr returns the mapping itself when the peer is on this PE's node.
func (p *Path) Ptr(off uint64, n int) []byte {
	if !p.mappable {
		return nil
	}
	return p.mem[off : off+uint64(n) : off+uint64(n)]
}

// Engine returns the engine shared by all mapped paths.
func (p *Path) Engine() transport.Engine { return syncEngine{} }

// syncEngine has nothing to do: every mapped operation is complete when it
// returns, and each one's last step is a sequentially consistent atomic
// (the word store, the signal, or publish's add), which already orders all
// of its stores before anything this PE does next.
type syncEngine struct{}

func (syncEngine) Fence() error { return nil }
func (syncEngine) Quiet() error { return nil }
func (syncEngine) Close() error { return nil }
func (syncEngine) Immediate()   {}
