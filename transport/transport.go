// Package transport defines the data path between PEs: the interfaces that a
// PE's put, get, atomic and signal calls go through, and the memory operations
// every transport applies to a heap. The implementations live below it:
// udma (same host: a load/store on a mapping of the peer's heap) and rdma
// (between hosts: framed messages over the network). The PE picks one Path per
// peer when the world starts and never looks at the transport again on the hot
// path.
package transport

import "time"

// AtomicOp is a remote atomic operation. Every op returns the word's previous
// value; the non-fetching API calls ignore it.
type AtomicOp uint8

// The atomic operations. Values are part of the rdma wire format: append only.
const (
	AtomicFetch       AtomicOp = iota + 1 // read
	AtomicSet                             // store operand
	AtomicSwap                            // store operand, return old
	AtomicCompareSwap                     // store operand if word == cond
	AtomicFetchAdd                        // add operand (wrapping)
	AtomicFetchAnd                        // and operand
	AtomicFetchOr                         // or operand
	AtomicFetchXor                        // xor operand
	atomicOpEnd
)

// Valid reports whether op is one of the defined operations.
func (op AtomicOp) Valid() bool { return op >= AtomicFetch && op < atomicOpEnd }

// SignalOp is how a signal value combines with the signal word.
type SignalOp uint8

// The signal operations; values are part of the rdma wire format.
const (
	SignalSet SignalOp = iota + 1
	SignalAdd
)

// Valid reports whether op is SignalSet or SignalAdd.
func (op SignalOp) Valid() bool { return op == SignalSet || op == SignalAdd }

// StaticsBase is where the offsets of a peer's statics region begin: a
// second symmetric region, outside the heap, that a foreign-language
// binding registers (a C program's globals and statics, which OpenSHMEM
// makes symmetric; shmem.WithStatics). Offset StaticsBase+x is byte x of
// the region. The network providers carry such offsets to the peer: rdma
// (TCP), whose peer checks them against its own region, and rdma/fabric,
// which checks them against the region the peer registered. The others
// have no statics region and refuse them as they refuse any offset
// outside the heap.
const StaticsBase uint64 = 1 << 62

// Path moves data between the calling PE and one peer. It is the provider
// interface of goshmem: udma (mapped memory), rdma (TCP lanes) and
// rdma/fabric (libfabric) implement it, and package pathtest is the
// conformance suite every implementation passes. A Path is used by many
// goroutines of one PE at once and must be safe for that.
//
// Offsets are byte offsets into the peer's symmetric heap, or from
// StaticsBase into its statics region. The caller (the
// root package) has already checked them against the symmetric object
// (range and alignment), so a Path checks only what protects memory it
// does not own; what it does with an operation outside the peer's heap is
// the provider's choice among three (pathtest.Bounds): return an error
// wrapping errs.ErrInvalidArgument, have the peer refuse it and fail the
// connection, or panic in a Go bounds check. In every case no byte is
// written outside either heap, nor outside [off, off+n) (only a transfer
// the provider splits, refused by the peer in part, may have landed its
// pieces that lie inside the heap).
//
// Completion and order follow OpenSHMEM:
//   - Put returns when src may be reused; the data is delivered by the next
//     Quiet of the path's Engine. Get returns with dst filled; GetNBI fills
//     dst by the next Quiet. Zero-length transfers do nothing.
//   - A Get, GetNBI or fetching Atomic sees every earlier write of this PE
//     to the same peer, with no Quiet between them. (The simulator's Lazy
//     delivery and cost model keep only what OpenSHMEM asks: such a read
//     may miss writes no Quiet completed; pathtest.ReadsMayMissWrites.)
//   - Writes issued after the Engine's Fence are never visible at a peer
//     before the writes issued to it before the Fence.
//
// Errors are *errs.Error values naming the operation, the calling PE and
// the peer (Target), and wrap a sentinel: errs.ErrPEFailed once the peer
// has failed (its connection broke, or the PE was declared failed), for
// every operation in flight and every later one, which end rather than
// wait; errs.ErrTimeout when the provider's own operation timeout expired
// (which also fails the peer); errs.ErrFinalized after the Engine's Close;
// errs.ErrInvalidArgument for an operation the path can refuse by itself.
type Path interface {
	// Put writes src at off in the peer's heap (see Path for completion).
	Put(off uint64, src []byte) error
	// Get reads len(dst) bytes at off into dst and returns when it is full.
	Get(dst []byte, off uint64) error
	// GetNBI reads len(dst) bytes at off into dst by the next Quiet; dst is
	// the provider's until then.
	GetNBI(dst []byte, off uint64) error
	// Atomic applies op to the width-byte word (4 or 8, aligned) at off and
	// returns the word's previous value. Operands wider than the word are
	// the caller's mistake. It is atomic with respect to the other atomics
	// on the word issued through the same provider's paths.
	Atomic(op AtomicOp, width int, off uint64, operand, cond uint64) (uint64, error)
	// AtomicPost applies a non-fetching op; it may complete at the next
	// Quiet. AtomicCompareSwap and AtomicFetch have no posted form.
	AtomicPost(op AtomicOp, width int, off uint64, operand uint64) error
	// PutSignal delivers src at off and then updates the 8-byte signal word
	// at sigOff: a peer that sees the signal sees the data. Like Put it is
	// delivered by the next Quiet, and the signal may be seen before that.
	PutSignal(off uint64, src []byte, sigOff uint64, value uint64, op SignalOp) error
	// Ptr returns a live view of exactly n bytes of the peer's heap at off
	// (length and capacity n), or nil when the peer's memory is not mapped
	// into this process or not meant to be reached by load and store.
	Ptr(off uint64, n int) []byte
	// Engine returns what completes this path's operations.
	Engine() Engine
}

// Engine completes and orders the operations of a set of paths (a node's,
// or every mapped path's). Paths that complete every operation before
// returning (mapped memory) share an engine whose Quiet and Fence cost
// nothing. An Engine is safe for concurrent use.
type Engine interface {
	// Fence orders, per destination PE, the puts, atomics and signals issued
	// before it ahead of those issued after it. It waits for nothing.
	Fence() error
	// Quiet returns when every operation issued before it is complete
	// everywhere and every GetNBI has filled its buffer. After a peer
	// failed it may keep returning errs.ErrPEFailed naming that peer.
	Quiet() error
	// Close releases the engine's connections and goroutines; operations
	// in flight end with errs.ErrFinalized (unless nothing was held, as for
	// mapped memory). A second Close returns nil.
	Close() error
}

// ConnCounter is implemented by an Engine whose paths dial connections
// (TCP): it reports how many it made, for metrics.
type ConnCounter interface {
	ConnStats() ConnStats
}

// ConnStats counts an engine's connections. An established connection that
// breaks is never reconnected (the writes it carried may be lost, so its
// peer counts as failed); Redials counts the dials repeated after a dial or
// handshake that failed, such as to a peer not listening yet.
type ConnStats struct {
	Connects uint64 // connections dialled and authenticated
	Redials  uint64 // dials after a failed dial or handshake to the same peer
}

// Immediate is implemented by an Engine whose paths complete every
// operation before it returns and order it by its own last step (mapped
// memory): its Fence and Quiet do nothing. A PE whose every engine is
// Immediate skips them, so its Quiet costs a load, not calls.
type Immediate interface {
	Engine
	Immediate()
}

// Bell wakes the goroutines of one PE that wait for its heap to change (the
// WaitUntil family, signal waits, locks, barriers). Writers ring the target's
// bell after their data is visible; a ring costs one load when nobody waits.
//
// A waiter calls Arm, re-checks its condition, then Wait with the value Arm
// returned, and Disarm when it stops waiting. Arm is a full memory barrier,
// and so is every write that precedes Ring, so a write and an arming waiter
// never miss each other.
//
// Wait reports whether a ring since Arm ended it (false: its timeout did).
// A waiter uses that to choose how to wait next: after a ring more writes
// often follow, worth polling for; after a timeout nothing was arriving.
// True may be spurious, so the waiter re-checks its condition either way.
type Bell interface {
	Ring()
	Arm() uint32
	Wait(armed uint32, timeout time.Duration) (rung bool)
	Disarm()
}
