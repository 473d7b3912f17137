package core

import (
	"time"

	"github.com/goshmem/shmem/transport"
)

// MeterSnapshot is a PE's metrics at one moment (PE.Meter).
type MeterSnapshot struct {
	Level int // the Pcontrol level
	// Ops holds a row for every operation kind and path kind that counted
	// at least one operation, the PE's and its contexts' together.
	Ops []MeterOps
	// Coll holds a row for every collective kind run at least once.
	Coll []MeterColl
	// FailedPEs is how many PEs this PE has recorded as failed.
	FailedPEs int
	// HeapSize is the usable symmetric heap; HeapInUse the bytes its live
	// objects take (heap.Heap.InUse).
	HeapSize, HeapInUse int64
	// Conns sums the connections of the PE's engines that dial them
	// (transport.ConnCounter): zero on shared memory and the simulator.
	Conns transport.ConnStats
}

// MeterOps is the counters of one operation kind on one path kind.
type MeterOps struct {
	Op         MeterOp
	Path       PathKind
	Ops, Bytes uint64
	// The timed operations took Sum together, and Buckets[i] of them took
	// at most LatencyBound(i) (not cumulative; the last counts those
	// above every bound).
	Sum     time.Duration
	Buckets [NumBuckets + 1]uint64
}

// MeterColl is the counters of one collective kind.
type MeterColl struct {
	Kind  CollKind
	Count uint64
	Time  time.Duration
}

// Meter returns the PE's metrics, or false when they are off. Any
// goroutine may call it, also after Finalize (the last counts stay).
func (p *PE) Meter() (MeterSnapshot, bool) {
	m := p.s.meter
	if m == nil {
		return MeterSnapshot{}, false
	}
	var sum meterBlock
	m.own.addTo(&sum)
	m.mu.Lock()
	for b := range m.live {
		b.addTo(&sum)
	}
	m.gone.addTo(&sum)
	m.mu.Unlock()
	h := p.s.cfg.Heap
	snap := MeterSnapshot{Level: p.PcontrolLevel(), FailedPEs: int(p.s.nFailed.Load()), HeapSize: h.Size(), HeapInUse: h.InUse()}
	for _, e := range p.s.engines {
		if c, ok := e.(transport.ConnCounter); ok {
			st := c.ConnStats()
			snap.Conns.Connects += st.Connects
			snap.Conns.Redials += st.Redials
		}
	}
	for k := range sum.cells {
		for o := range sum.cells[k] {
			c := &sum.cells[k][o]
			if c.ops == 0 {
				continue
			}
			snap.Ops = append(snap.Ops, MeterOps{Op: MeterOp(o), Path: PathKind(k), Ops: c.ops, Bytes: c.bytes, Sum: time.Duration(c.sumNanos), Buckets: c.buckets})
		}
	}
	for k := range m.coll {
		if n := m.coll[k].count.Load(); n > 0 {
			snap.Coll = append(snap.Coll, MeterColl{Kind: CollKind(k), Count: n, Time: time.Duration(m.coll[k].nanos.Load())})
		}
	}
	return snap, true
}
