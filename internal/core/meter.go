package core

import (
	"math/bits"
	"sync"
	"sync/atomic"
	"time"
)

// MeterOp is a kind of operation the metrics count (Config.Metrics).
type MeterOp uint8

// The operation kinds, as the metrics name them (MeterOp.String).
const (
	OpPut         MeterOp = iota // Put, PutNBI, P, IPut
	OpGet                        // Get, G, IGet
	OpGetNBI                     // GetNBI
	OpAtomicFetch                // fetching atomics, blocking or not
	OpAtomicPost                 // non-fetching atomics
	OpPutSignal                  // PutSignal, PutSignalNBI
	OpQuiet                      // Quiet (path kind PathAll)
	OpFence                      // Fence (path kind PathAll)
	NumMeterOps
)

// String names the kind in the metrics' op label.
func (o MeterOp) String() string {
	return [NumMeterOps]string{"put", "get", "get_nbi", "atomic_fetch", "atomic", "put_signal", "quiet", "fence"}[o]
}

// PathKind is the kind of data path an operation went through.
type PathKind uint8

// The path kinds (PathKind.String).
const (
	PathSim    PathKind = iota // the simulator's in-process path
	PathShm                    // shared memory on this host (this PE's own heap included)
	PathTCP                    // the TCP (TLS) transport
	PathFabric                 // libfabric
	PathRelay                  // TCP relayed through a third PE
	PathAll                    // operations of no one path: Quiet, Fence
	NumPathKinds
)

// String names the kind in the metrics' path label.
func (k PathKind) String() string {
	return [NumPathKinds]string{"sim", "shm", "tcp", "fabric", "relay", "all"}[k]
}

// SampleEvery is how many operations of one kind and path the metrics
// count per operation they time, at Pcontrol level 1. Two clock reads
// cost about 75 ns on the machines goshmem was measured on, twice an
// 8-byte put on shared memory (about 35 ns): timing every put would
// triple it, and one in 256 would still add 0.3 ns (1%) on average. One
// in 1024 adds 0.07 ns, and a service doing 100 000 operations a second
// still gets about 100 samples a second per kind. It is a power of two,
// so choosing is a mask of the count the operation bumps anyway.
const SampleEvery = 1024

// NumBuckets is the number of latency buckets with a bound (LatencyBound).
const NumBuckets = 14

// LatencyBound returns the upper bound of latency bucket i: powers of 4
// from 32 ns (under a shared-memory put with its clock reads) to 2.1 s (a
// TCP operation under a failure timeout).
func LatencyBound(i int) time.Duration { return time.Duration(1) << (2*i + 5) }

// bucket returns the index of the first bound not below d, NumBuckets
// past the last.
func bucket(d int64) int {
	if d <= 32 {
		return 0
	}
	i := (bits.Len64(uint64(d-1)) - 4) / 2 // ceil((len-5)/2)
	return min(i, NumBuckets)
}

// Cell is the counters of one operation kind on one path kind.
type Cell struct {
	ops, bytes uint64
	sumNanos   uint64
	buckets    [NumBuckets + 1]uint64 // the last counts samples past every bound
}

// meterBlock is the counters of one PE or one context: only the goroutines
// that use that handle write them (see bump).
type meterBlock struct {
	cells [NumPathKinds][NumMeterOps]Cell
}

// meter is a PE's metrics: its own block, its contexts' blocks and the
// totals of destroyed contexts, the collectives' counters, and the level.
type meter struct {
	own  *meterBlock
	mu   sync.Mutex
	mask int64                    // the Pcontrol level as a mask (setLevel); under mu
	cs   map[*Counts]struct{}     // every live handle's counts; under mu
	live map[*meterBlock]struct{} // contexts' blocks; under mu
	gone meterBlock               // destroyed contexts' totals; under mu
	coll [NumCollKinds]struct{ count, nanos atomic.Uint64 }
}

func newMeter(level int) *meter {
	m := &meter{own: new(meterBlock), cs: map[*Counts]struct{}{}, live: map[*meterBlock]struct{}{}}
	m.setLevel(level)
	return m
}

// newBlock gives a context a block of its own, so that the goroutine
// using the context writes lines no other handle writes.
func (m *meter) newBlock() *meterBlock {
	b := new(meterBlock)
	m.mu.Lock()
	m.live[b] = struct{}{}
	m.mu.Unlock()
	return b
}

// retire folds a destroyed context's block into the totals and forgets
// its counts.
func (m *meter) retire(b *meterBlock, c *Counts) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.cs, c)
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

// Counts is one handle's (a PE's or a context's) metrics as its
// operations bump them: the row of its block for each target PE number
// of the handle, by the path's kind.
type Counts struct {
	// mask is the Pcontrol level as count reads it (setLevel): a field of
	// the handle's own, one load from the Counts the caller holds.
	mask atomic.Int64
	rows []*[NumMeterOps]Cell
	all  *[NumMeterOps]Cell // Quiet and Fence
}

// newCounts returns the counts of a handle whose block is b and whose
// target PE number i reaches a path of kind kind(i), one of n.
func (m *meter) newCounts(b *meterBlock, n int, kind func(i int) PathKind) *Counts {
	c := &Counts{rows: make([]*[NumMeterOps]Cell, n), all: &b.cells[PathAll]}
	for i := range c.rows {
		c.rows[i] = &b.cells[kind(i)]
	}
	m.mu.Lock()
	c.mask.Store(m.mask)
	m.cs[c] = struct{}{}
	m.mu.Unlock()
	return c
}

// Counts returns the handle's counts, nil without metrics.
func (p *PE) Counts() *Counts { return p.counts }

// Count counts one operation op of n bytes to the handle's PE pe (a
// number Path accepted) and returns its cell when the operation is to be
// timed (Cell.Observe), nil otherwise: always nil on a nil Counts (no
// metrics) or at level 0, one in SampleEvery at level 1, never nil at 2
// and above. The root package calls p.Counts().Count on every operation;
// both inline, to a nil check when metrics are off.
func (c *Counts) Count(op MeterOp, pe, n int) *Cell {
	if c == nil {
		return nil
	}
	return c.count(&c.rows[pe][op], n)
}

// count counts one operation of n bytes in x and says whether to time it.
// The level is read as a mask (setLevel), which keeps Count small
// enough to inline.
func (c *Counts) count(x *Cell, n int) *Cell {
	mask := c.mask.Load()
	if mask < 0 {
		return nil
	}
	bump(&x.bytes, uint64(n))
	if (bump(&x.ops, 1)-1)&uint64(mask) == 0 {
		return x
	}
	return nil
}

// setLevel sets the mask count reads for Pcontrol level lvl: -1 (count
// nothing) at 0, SampleEvery-1 (time the 1st, the 1025th, ...) at 1, 0
// (time every one) at 2 and above.
// It reaches every live handle's counts.
func (m *meter) setLevel(lvl int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case lvl <= 0:
		m.mask = -1
	case lvl == 1:
		m.mask = SampleEvery - 1
	default:
		m.mask = 0
	}
	for c := range m.cs {
		c.mask.Store(m.mask)
	}
}

// Observe records one timed operation that started at t0.
func (x *Cell) Observe(t0 time.Time) {
	d := int64(time.Since(t0))
	bump(&x.sumNanos, uint64(d))
	bump(&x.buckets[bucket(d)], 1)
}

// Time runs f, the operation Count chose to time, and records its time.
func (x *Cell) Time(f func() error) error {
	t0 := time.Now()
	err := f()
	x.Observe(t0)
	return err
}
