package core

import (
	"math/bits"
	"sync"
	"sync/atomic"
	"time"
)

// MeterOp is a kind of operation the metrics count (Config.Metrics).
type MeterOp uint8

// The operation kinds, as the metrics name them (MeterOpNames).
const (
	OpPut         MeterOp = iota // Put, PutNBI, IPut, P of elements under 4 bytes
	OpGet                        // Get, IGet, G of elements under 4 bytes
	OpGetNBI                     // GetNBI
	OpAtomicFetch                // fetching atomics, G and compare-swap
	OpAtomicPost                 // non-fetching atomics and P
	OpPutSignal                  // PutSignal, PutSignalNBI
	OpQuiet                      // Quiet (path kind PathAll)
	OpFence                      // Fence (path kind PathAll)
	NumMeterOps
)

// MeterOpNames names each MeterOp in the metrics' op label.
var MeterOpNames = [NumMeterOps]string{"put", "get", "get_nbi", "atomic_fetch", "atomic", "put_signal", "quiet", "fence"}

// PathKind is the kind of data path an operation went through.
type PathKind uint8

// The path kinds (PathKindNames).
const (
	PathSim    PathKind = iota // the simulator's in-process path
	PathShm                    // shared memory on this host (this PE's own heap included)
	PathTCP                    // the TCP (TLS) transport
	PathFabric                 // libfabric
	PathRelay                  // TCP relayed through a third PE
	PathAll                    // operations of no one path: Quiet, Fence
	NumPathKinds
)

// PathKindNames names each PathKind in the metrics' path label.
var PathKindNames = [NumPathKinds]string{"sim", "shm", "tcp", "fabric", "relay", "all"}

// SampleEvery is how many operations of one kind and path the metrics
// count per operation they time, at Pcontrol level 1. Two clock reads
// cost 40-60 ns on the machines goshmem was measured on, more than an 8-byte
// put on shared memory (about 35 ns): timing every put would double it.
// One in 256 adds a quarter of a nanosecond per operation on average,
// and a service doing a million operations a second still gets about
// 4000 samples a second per kind. It is a power of two, so choosing is
// a mask of the count the operation bumps anyway.
const SampleEvery = 256

// LatencyBounds are the latency histogram's bucket upper bounds: powers
// of 4 from 32 ns (under a shared-memory put with its clock reads) to
// 2.1 s (a TCP operation under a failure timeout), 14 buckets.
var LatencyBounds = func() [numBuckets]time.Duration {
	var b [numBuckets]time.Duration
	for i := range b {
		b[i] = time.Duration(1) << (2*i + 5)
	}
	return b
}()

const numBuckets = 14

// bucket returns the index of the first bound not below d, numBuckets
// past the last.
func bucket(d int64) int {
	if d <= 32 {
		return 0
	}
	i := (bits.Len64(uint64(d-1)) - 4) / 2 // ceil((len-5)/2)
	return min(i, numBuckets)
}

// cell is the counters of one operation kind on one path kind.
type cell struct {
	ops, bytes uint64
	sumNanos   uint64
	buckets    [numBuckets + 1]uint64 // the last counts samples past every bound
}

// meterBlock is the counters of one PE or one context: only the goroutines
// that use that handle write them (see bump).
type meterBlock struct {
	cells [NumPathKinds][NumMeterOps]cell
}

// meter is a PE's metrics: its own meterBlock, its contexts' blocks and the
// totals of destroyed contexts, the collectives' counters, and the level.
type meter struct {
	level *atomic.Int32 // the Pcontrol level (state.pctl)
	own   *meterBlock
	mu    sync.Mutex
	live  map[*meterBlock]struct{} // contexts' blocks
	gone  meterBlock               // destroyed contexts' totals; under mu
	coll  [NumCollKinds]struct{ count, nanos atomic.Uint64 }
}

func newMeter(level *atomic.Int32) *meter {
	return &meter{level: level, own: new(meterBlock), live: map[*meterBlock]struct{}{}}
}

// newBlock gives a context a meterBlock of its own, so that the goroutine
// using the context writes lines no other handle writes.
func (m *meter) newBlock() *meterBlock {
	b := new(meterBlock)
	m.mu.Lock()
	m.live[b] = struct{}{}
	m.mu.Unlock()
	return b
}

// retire folds a destroyed context's meterBlock into the totals.
func (m *meter) retire(b *meterBlock) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.live[b]; !ok {
		return
	}
	delete(m.live, b)
	b.addTo(&m.gone)
}

// addTo adds b's counters to dst.
func (b *meterBlock) addTo(dst *meterBlock) {
	for k := range b.cells {
		for o := range b.cells[k] {
			s, d := &b.cells[k][o], &dst.cells[k][o]
			d.ops += load(&s.ops)
			d.bytes += load(&s.bytes)
			d.sumNanos += load(&s.sumNanos)
			for i := range s.buckets {
				d.buckets[i] += load(&s.buckets[i])
			}
		}
	}
}

// begin counts one operation of n bytes in c and says whether to time it:
// never at level 0 (nothing is counted), one in SampleEvery at level 1,
// every one at level 2 and above.
func (m *meter) begin(c *cell, n int) bool {
	lvl := m.level.Load()
	if lvl <= 0 {
		return false
	}
	k := bump(&c.ops, 1)
	bump(&c.bytes, uint64(n))
	return lvl >= 2 || k&(SampleEvery-1) == 1
}

// observe records one timed operation that started at t0.
func (c *cell) observe(t0 time.Time) {
	d := int64(time.Since(t0))
	bump(&c.sumNanos, uint64(d))
	bump(&c.buckets[bucket(d)], 1)
}
