// Package pathtest is the conformance suite every transport.Path provider
// passes: the same checks, with real values, of the Path, Engine and Bell
// contract for udma, the TCP lanes (rdma, with and without TLS), the
// libfabric provider and the simulator's paths: internal/core's in-process
// world, which sim.Run runs on, and the simulated network of
// internal/simnet behind sim's delivery, seed, model and fault options, in
// Eager and Lazy delivery, with and without a cost model (its
// Unscheduled mode lets the suite's plain goroutines call the paths its
// scheduler otherwise runs one PE at a time). A provider's test file
// supplies a Provider whose NewWorld builds PEs of that provider in the
// test process and calls Run:
//
//	func TestPath(t *testing.T) {
//		pathtest.Run(t, pathtest.Provider{NewWorld: newPathWorld, Thresholds: []int{8 << 10}})
//	}
//
// Every subtest builds its own world, checks that the world's cleanup
// leaves no goroutine behind (goleak), and bounds every wait with a guard
// that fails the test instead of hanging it. Providers differ only where
// the contract lets them (Bounds, Finalizes, FailureSticks,
// ReadsMayMissWrites, a nil Bell, Failer); those differences are declared,
// not skipped silently.
package pathtest

import (
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/goshmem/shmem/transport"
)

// World is the PEs of one provider that a subtest uses, all in the test
// process. The world registers its own cleanup (t.Cleanup) in NewWorld;
// once that has run, no goroutine it started may be left.
type World interface {
	// Path returns PE from's path to PE to (from != to).
	Path(from, to int) transport.Path
	// Heap returns rank's symmetric heap as the provider serves it: the
	// suite seeds and checks values through it directly. It holds at least
	// the heapSize bytes asked for (a PE may reserve more for itself, which
	// the suite may overwrite); its length is where the heap ends for the
	// bounds checks. Capacity beyond its length, if any, is guard memory
	// that no operation may write.
	Heap(rank int) []byte
	// Bell returns the bell that remote writes to rank's heap ring, or nil
	// when the provider rings none (then waits poll with Quiet).
	Bell(rank int) transport.Bell
}

// Failer is a World whose PEs can fail. Fail stops rank for good (its
// connections close) and tells every other PE's provider, as the failure
// detector would; it returns once they have been told.
type Failer interface {
	Fail(rank int)
}

// Provider describes one provider to the suite.
type Provider struct {
	// NewWorld builds npes PEs whose heaps are heapSize bytes each, or
	// calls t.Skip when the provider cannot run here.
	NewWorld func(t *testing.T, npes, heapSize int) World
	// Thresholds are the sizes at which the provider changes how it moves
	// data (an inline buffer, a lane, a chunk, a bounce buffer, a pipelining
	// window): the suite moves sizes at, just below and just above each.
	// Keep them small enough for a test (a few MiB at most).
	Thresholds []int
	// Bounds is what the provider's paths do with an operation that reaches
	// outside the peer's heap.
	Bounds Bounds
	// Finalizes says that once Engine.Close returns, every operation on the
	// engine's paths fails with errs.ErrFinalized (false for mapped memory,
	// where Close has nothing to release).
	Finalizes bool
	// FailureSticks says that writes lost with a failed peer keep failing
	// the engine's completion waits, which are not per peer: after a
	// failure, an operation towards a live peer that first completes
	// earlier writes (a Get or fetching atomic, read-after-write) may fail
	// naming the failed PE. Without it only Quiet may keep reporting the
	// failed PE, and the live peers' paths work as before.
	FailureSticks bool
	// ReadsMayMissWrites says that a Get or fetching Atomic may miss the
	// calling PE's earlier writes to the same peer until a Quiet completes
	// them, as OpenSHMEM allows: the simulator's Lazy delivery and cost
	// model do so on purpose, to expose programs that rely on more. The
	// suite then checks that such a read returns every byte either as it
	// was or as written, and exactly as written after the Quiet.
	ReadsMayMissWrites bool
}

// Bounds is how a provider refuses an operation outside the peer's heap.
// In every mode no byte of either heap, and none of the caller's buffer,
// is written.
type Bounds int

const (
	// BoundsInvalid: the path knows the peer's heap size and returns an
	// error wrapping errs.ErrInvalidArgument naming the peer; the path
	// stays usable.
	BoundsInvalid Bounds = iota
	// BoundsPeerRefuses: the path cannot know the peer's heap size; the
	// peer checks every request before it touches memory and drops the
	// connection of a sender that reaches outside, so the call, or the next
	// Quiet, fails with errs.ErrPEFailed naming the peer. Arguments the
	// path can check alone (atomic width and alignment, signal alignment)
	// are errs.ErrInvalidArgument at once.
	BoundsPeerRefuses
	// BoundsPanic: mapped memory; the path trusts its caller (the root
	// package checks every symmetric address) and Go's bounds check panics
	// before any byte is copied.
	BoundsPanic
)

// guard bounds every wait of the suite: a provider that never completes
// fails the test with a message instead of hanging it. It is not a timing
// assertion; healthy waits take microseconds.
const guard = 2 * time.Minute

// Run runs the suite as subtests of t.
func Run(t *testing.T, p Provider) {
	t.Run("PutGet", func(t *testing.T) { testPutGet(t, p) })
	t.Run("Ptr", func(t *testing.T) { testPtr(t, p) })
	t.Run("ReadAfterWrite", func(t *testing.T) { testReadAfterWrite(t, p) })
	t.Run("Atomics", func(t *testing.T) { testAtomics(t, p) })
	t.Run("AtomicsConcurrent", func(t *testing.T) { testAtomicsConcurrent(t, p) })
	t.Run("PutSignal", func(t *testing.T) { testPutSignal(t, p) })
	t.Run("Fence", func(t *testing.T) { testFence(t, p) })
	t.Run("Quiet", func(t *testing.T) { testQuiet(t, p) })
	t.Run("Bell", func(t *testing.T) { testBell(t, p) })
	t.Run("Bounds", func(t *testing.T) { testBounds(t, p) })
	t.Run("Failure", func(t *testing.T) { testFailure(t, p) })
	t.Run("Finalized", func(t *testing.T) { testFinalized(t, p) })
}

// world builds a world for one subtest and checks, after the world's own
// cleanup, that none of the goroutines it started is left.
func (p Provider) world(t *testing.T, npes, heapSize int) World {
	t.Helper()
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, before) }) // runs after the world's cleanups
	return p.NewWorld(t, npes, heapSize)
}

// sizes returns the transfer sizes the suite moves: small sizes around
// word boundaries, and each threshold with its neighbours, ascending.
func (p Provider) sizes() []int {
	set := map[int]bool{}
	for _, n := range []int{1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 255, 256, 257, 1000, 4095, 4096, 4097} {
		set[n] = true
	}
	for _, th := range p.Thresholds {
		for _, n := range []int{th - 1, th, th + 1} {
			if n > 0 {
				set[n] = true
			}
		}
	}
	set[2*p.largest()+3] = true // several of the largest unit, and a ragged end
	out := make([]int, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// largest is the largest threshold, or 64 KiB when none is declared.
func (p Provider) largest() int {
	m := 64 << 10
	for _, th := range p.Thresholds {
		m = max(m, th)
	}
	return m
}
