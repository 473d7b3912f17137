package shmem

import (
	"time"

	"github.com/goshmem/shmem/internal/core"
)

// WithMetrics turns on the PE's metrics: every put, get, atomic, signal,
// Quiet and Fence is counted with its bytes, per operation kind and per
// kind of path, one operation in MetricsSampleEvery of each is timed, and
// collectives are counted and timed. Read them with PE.Metrics, or export
// them to Prometheus with package metrics. Without it the operations run
// exactly as they did: nothing is counted and nothing is checked.
//
// Pcontrol sets the level: 0 stops counting (the counts stay), 1 (the
// level at Init) counts and samples, 2 and above time every operation
// (detailed profiling; two clock reads per operation, more than an
// 8-byte put on shared memory costs).
//
// Counts are exact when each goroutine uses its own PE or context; two
// goroutines using one handle at the same instant may lose an increment
// (the counters are plain adds, see BENCHMARKS.md), except under the race
// detector, where they are atomic.
func WithMetrics() Option { return func(o *options) { o.metrics = true } }

// MetricsSampleEvery is how many operations of one kind and path the
// metrics count per operation they time at Pcontrol level 1 (the first,
// then every 1024th): timing an operation takes two clock reads (about
// 75 ns), twice an 8-byte shared-memory put, while 1 in 1024 adds 0.07 ns
// per operation on average and still gives a service doing 100 000
// operations a second about 100 samples a second per kind.
const MetricsSampleEvery = core.SampleEvery

// Metrics is a snapshot of one PE's metrics (PE.Metrics): the PE's and
// its contexts' operations together.
type Metrics struct {
	PE    int    // the PE's number in its world
	World uint64 // identifies the world; it differs between worlds
	Level int    // the Pcontrol level
	// Ops has a row for every operation kind and path kind with at least
	// one operation.
	Ops []OpMetrics
	// Collectives has a row for every collective kind run at least once.
	Collectives []CollectiveMetrics
	// FailedPEs is how many PEs this PE has recorded as failed.
	FailedPEs int
	// HeapSize is the usable symmetric heap in bytes; HeapInUse the bytes
	// requested by its live objects (goshmem's own team slots included).
	HeapSize, HeapInUse int64
	// Connections is how many connections this PE dialled to its peers
	// (TCP; none on shared memory or in the simulator). Redials is how many
	// of those dials repeated one that had failed, to a peer not listening
	// yet or a handshake cut short. goshmem never reconnects a connection
	// that broke once established (its writes may be lost, so the peer
	// counts as failed): a Redials that keeps rising names a peer that is
	// late or unreachable.
	Connections, Redials uint64
}

// OpMetrics is the counts of one operation kind on one path kind.
type OpMetrics struct {
	// Op is put (Put, PutNBI, P, IPut: one per call), get (Get, G,
	// IGet), get_nbi, atomic_fetch (fetching atomics, blocking or not),
	// atomic (non-fetching atomics), put_signal (PutSignal and its NBI
	// form), quiet (Quiet, and those BarrierAll, Team.Barrier, Finalize
	// and a context's Destroy run) or fence. Collectives, locks and waits are not counted here.
	Op string
	// Path is sim (the simulator), shm (shared memory, the PE's own heap
	// included), tcp, fabric, relay (TCP through a third PE), or all (Quiet
	// and Fence, which cover every path).
	Path string
	// Count operations moved Bytes bytes: the data, and for atomics the
	// word (4 or 8 bytes), for signals the data and the 8-byte signal.
	Count, Bytes uint64
	// Latency is the sampled operations' time to return.
	Latency LatencyHistogram
}

// LatencyHistogram is a histogram of sampled operation times.
type LatencyHistogram struct {
	Count uint64        // operations timed
	Sum   time.Duration // their total time
	// Bounds are the buckets' upper bounds, powers of 4 from 32 ns to
	// 2.1 s; Cumulative[i] operations took at most Bounds[i]. Count
	// includes those above the last bound.
	Bounds     []time.Duration
	Cumulative []uint64
}

// CollectiveMetrics is the counts of one collective kind.
type CollectiveMetrics struct {
	// Kind is barrier (BarrierAll, Team.Barrier), sync (SyncAll,
	// Team.Sync), broadcast, collect, fcollect, alltoall, alltoalls or
	// reduce (Reduce, ReduceComplex).
	Kind  string
	Count uint64        // calls, failed ones included
	Time  time.Duration // their total time
}

// Metrics returns a snapshot of the PE's metrics (WithMetrics), or false
// and only PE and World when they are off (PE -1 for a nil or zero PE).
// Any goroutine may call it, also after Finalize, which leaves the last
// counts.
func (p *PE) Metrics() (Metrics, bool) {
	if p.zero() {
		return Metrics{PE: -1}, false
	}
	s, ok := p.c.Meter()
	if !ok {
		return Metrics{PE: p.c.MyPE(), World: p.c.WorldID()}, false
	}
	m := Metrics{PE: p.c.MyPE(), World: p.c.WorldID(), Level: s.Level, FailedPEs: s.FailedPEs, HeapSize: s.HeapSize, HeapInUse: s.HeapInUse,
		Connections: s.Conns.Connects, Redials: s.Conns.Redials}
	for _, o := range s.Ops {
		m.Ops = append(m.Ops, OpMetrics{Op: o.Op.String(), Path: o.Path.String(),
			Count: o.Ops, Bytes: o.Bytes, Latency: histogram(o)})
	}
	for _, c := range s.Coll {
		m.Collectives = append(m.Collectives, CollectiveMetrics{Kind: c.Kind.String(), Count: c.Count, Time: c.Time})
	}
	return m, true
}

// histogram makes o's buckets cumulative. Its count is the buckets' sum,
// so that the histogram is consistent however the plain counters raced.
func histogram(o core.MeterOps) LatencyHistogram {
	h := LatencyHistogram{Sum: o.Sum, Bounds: make([]time.Duration, core.NumBuckets), Cumulative: make([]uint64, core.NumBuckets)}
	for i := range h.Bounds {
		h.Bounds[i] = core.LatencyBound(i)
	}
	for i, n := range o.Buckets {
		h.Count += n
		if i < len(h.Cumulative) {
			h.Cumulative[i] = h.Count
		}
	}
	return h
}
