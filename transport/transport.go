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

// Path moves data between the calling PE and one peer. Offsets are byte
// offsets into the peer's symmetric heap; the caller has already checked them
// against the symmetric object (range and alignment), so a Path checks only
// what protects memory it does not own.
//
// Completion follows OpenSHMEM: Put returns when src may be reused and the
// data is delivered by the next Quiet on the Engine that owns the path; Get
// returns with dst filled; GetNBI fills dst by the next Quiet. A Path is used
// by many goroutines of one PE at once and must be safe for that.
type Path interface {
	Put(off uint64, src []byte) error
	Get(dst []byte, off uint64) error
	GetNBI(dst []byte, off uint64) error
	// Atomic applies op to the width-byte word (4 or 8, aligned) at off and
	// returns the word's previous value.
	Atomic(op AtomicOp, width int, off uint64, operand, cond uint64) (uint64, error)
	// AtomicPost applies a non-fetching op; it may complete at the next Quiet.
	AtomicPost(op AtomicOp, width int, off uint64, operand uint64) error
	// PutSignal delivers src at off and then updates the 8-byte signal word
	// at sigOff: a peer that sees the signal sees the data.
	PutSignal(off uint64, src []byte, sigOff uint64, value uint64, op SignalOp) error
	// Ptr returns a live view of n bytes of the peer's heap at off, or nil
	// when the peer's memory is not mapped into this process.
	Ptr(off uint64, n int) []byte
	// Engine returns what completes this path's operations.
	Engine() Engine
}

// Engine completes and orders the operations of a set of paths. Paths that
// complete every operation before returning (mapped memory) share the Sync
// engine, whose Quiet costs one memory barrier.
type Engine interface {
	// Fence orders, per destination PE, the puts, atomics and signals issued
	// before it ahead of those issued after it.
	Fence() error
	// Quiet returns when every operation issued before it is complete
	// everywhere and every GetNBI has filled its buffer.
	Quiet() error
	// Close releases the engine's connections and goroutines.
	Close() error
}

// Bell wakes the goroutines of one PE that wait for its heap to change (the
// WaitUntil family, signal waits, locks, barriers). Writers ring the target's
// bell after their data is visible; a ring costs one load when nobody waits.
//
// A waiter calls Arm, re-checks its condition, then Wait with the value Arm
// returned, and Disarm when it stops waiting. Arm is a full memory barrier,
// and so is every write that precedes Ring, so a write and an arming waiter
// never miss each other.
type Bell interface {
	Ring()
	Arm() uint32
	Wait(armed uint32, timeout time.Duration)
	Disarm()
}
