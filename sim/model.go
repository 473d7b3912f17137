package sim

import (
	"time"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/internal/simnet"
)

// Model is a LogGP-style cost model: Intra holds the costs between PEs on
// one node (WithNodes), Inter between nodes. Times are nanoseconds.
type Model = simnet.Model

// Params are one class of link's costs (see Model).
type Params = simnet.Params

// ModelSHM is shared memory on this project's 2-core EPYC test machine,
// fitted to BENCHMARKS.md's udma rows (2 PEs): put+quiet 8 B 0.038 µs
// (overhead and latency), put bandwidth 1-4 MiB 31759 MB/s (per byte),
// barrier 0.519 µs (one dissemination round: overhead, latency and the
// waiter's wake-up). Slice comes from BENCHMARKS.md's 4-PE barrier on the
// 2-core machine (26.9 µs, two rounds); it applies only when Cores is set,
// which ModelSHM leaves at 0 (a core per PE): set it to model a crowded
// host. Each call returns a fresh copy to change as the caller likes.
func ModelSHM() Model {
	return Model{
		Name:  "shm",
		Intra: Params{Latency: 9, Overhead: 20, Gap: 0, PerByte: 1 / 31.759, Wake: 490, Slice: 12900},
		Inter: Params{Latency: 9, Overhead: 20, Gap: 0, PerByte: 1 / 31.759, Wake: 490, Slice: 12900},
	}
}

// ModelTCP is every PE pair over goshmem's TCP transport, fitted to
// BENCHMARKS.md's tcp rows (2 PE processes on one host): put+quiet 8 B
// 11.23 µs and get 8 B 11.21 µs (overhead plus two latencies), put
// bandwidth 1 MiB 5348 MB/s (per byte), barrier 39.51 µs (one round:
// overhead, latency and a parked waiter's wake-up). Intra-node pairs use
// the same costs; a file can give them shared-memory costs instead. Slice
// comes from the 4-PE TCP barrier on 2 cores (358 µs), as for ModelSHM.
// Each call returns a fresh copy.
func ModelTCP() Model {
	return Model{
		Name:  "tcp",
		Intra: Params{Latency: 5000, Overhead: 1200, Gap: 0, PerByte: 1 / 5.348, Wake: 33300, Slice: 139700},
		Inter: Params{Latency: 5000, Overhead: 1200, Gap: 0, PerByte: 1 / 5.348, Wake: 33300, Slice: 139700},
	}
}

// LoadModel reads a Model from a JSON file:
//
//	{"name": "ib", "intra": {"latency_ns": 9, "overhead_ns": 20, "gap_ns": 0,
//	 "per_byte_ns": 0.03, "wake_ns": 490}, "inter": {...}}
func LoadModel(file string) (Model, error) {
	m, err := simnet.LoadModel(file)
	if err != nil {
		return Model{}, err
	}
	return *m, nil
}

// WithModel gives every PE a virtual clock that m advances: each message
// costs its sender the overhead, gap and per-byte time and lands one
// latency later (writes land at their modeled arrival, which is itself a
// schedule the memory model allows), a blocking Get or fetching atomic
// costs a round trip, Quiet waits for the last ack, and a PE that blocked
// wakes m's wake-up time after the write that ends its wait. Computation
// between goshmem calls costs nothing. The PE with the earliest clock runs
// next, so runs with a model are deterministic whatever the seed.
//
// A model reorders nothing: writes from one PE land in the order it
// issued them, at their modeled arrival, whatever WithDelivery says, so a
// missing Fence goes unnoticed under a model; look for those in Lazy mode
// without one. A cost that is not a finite number of nanoseconds in
// [0, 1 day), or a negative Cores, makes Run and Measure fail with
// ErrInvalidArgument, as LoadModel refuses such a file.
func WithModel(m Model) Option {
	return func(c *config) {
		if err := simnet.CheckModel(&m); err != nil {
			c.refuseErr("WithModel", err)
			return
		}
		c.net.model = &m
	}
}

// Report is what Measure measured, in virtual time.
type Report struct {
	// Elapsed is the slowest PE's virtual time when its function returned
	// (the closing Finalize is not counted).
	Elapsed time.Duration
	// PE holds each PE's virtual time when its function returned.
	PE []time.Duration
	// Ops counts each PE's goshmem calls.
	Ops []int
	// Links is the traffic of every PE pair that exchanged messages,
	// by source then target.
	Links []Link
	// Calls is the time of every collective call (barrier, sync, data
	// collective, on any team), by when its first member entered it.
	Calls []Call
	// Seed is the seed the run used (WithSeed replays it).
	Seed int64
	// Steps holds, for MeasureSteps, each step's time: from the moment
	// the slowest PE finished the step before (0 for the first) to the
	// moment the slowest PE finished this one.
	Steps []time.Duration
}

// Link is the traffic from one PE to another during a Measure.
type Link = simnet.Link

// Call is one collective call of a Measure, in virtual time from the start
// of the run.
type Call struct {
	Op   string // as its first member named it: BarrierAll, FCollect, Reduce, ...
	Team string // "world", "shared" or a split team's ID
	Seq  uint64 // its number among the team's operations
	PEs  int    // members that returned from it
	// Start is when its last member entered it, End when its last member
	// returned.
	Start, End time.Duration
	// Time is End - Start: what the call costs once every member is in
	// it (a member that came earlier waits that much more).
	Time time.Duration
	// Skew is how long before Start its first member entered.
	Skew time.Duration
}

func callsOf(cs []simnet.Call) []Call {
	out := make([]Call, len(cs))
	for i, c := range cs {
		out[i] = Call{Op: c.Op, Team: c.Team, Seq: c.Seq, PEs: c.PEs,
			Start: time.Duration(c.LastIn), End: time.Duration(c.LastOut),
			Time: time.Duration(c.LastOut) - time.Duration(c.LastIn), Skew: time.Duration(c.LastIn) - time.Duration(c.FirstIn)}
	}
	return out
}

// MeasureSteps is Measure for a program in steps that every PE runs in
// order, and reports each step's time in Report.Steps: how a program times
// one collective, with a barrier as the step before it to line PEs up.
// A step's time runs from the last PE's end of the step before to the
// last PE's end of this one, so it measures what keeps the slowest PE
// busy: PEs leave a barrier at different virtual times (its exit skew,
// Report.Calls' Skew), and a step in which only an early PE works (a
// one-sided Get, say) can read 0 when it ends before the last PE has left
// the barrier. Time such an operation in a step every PE runs, or on its
// own (Measure around a loop of it).
func MeasureSteps(npes int, steps []func(p *shmem.PE) error, opts ...Option) (Report, error) {
	var mark func(rank int)
	rep, err := measure(npes, func(p *shmem.PE) error {
		for _, s := range steps {
			if err := s(p); err != nil {
				return err
			}
			mark(p.MyPE())
		}
		return nil
	}, func(f func(int)) { mark = f }, opts)
	if err != nil || len(rep.marks) == 0 {
		return rep.Report, err
	}
	prev := 0.0
	for i := range steps {
		end := 0.0
		for _, m := range rep.marks {
			if i < len(m) {
				end = max(end, m[i])
			}
		}
		rep.Steps = append(rep.Steps, time.Duration(end-prev))
		prev = end
	}
	return rep.Report, nil
}

type measured struct {
	Report
	marks [][]float64
}

// Measure runs fn like Run under a cost model (ModelSHM unless WithModel
// says otherwise) and reports virtual times; MeasureSteps times the steps
// of a program.
func Measure(npes int, fn func(p *shmem.PE) error, opts ...Option) (Report, error) {
	rep, err := measure(npes, fn, nil, opts)
	return rep.Report, err
}

func measure(npes int, fn func(p *shmem.PE) error, marker func(func(rank int)), opts []Option) (measured, error) {
	c, err := newConfig(npes, fn, opts)
	if err != nil {
		return measured{}, err
	}
	if c.net.model == nil {
		m := ModelSHM()
		c.net.model = &m
	}
	res, err := runNet(npes, fn, &c, marker)
	rep := measured{Report: Report{PE: make([]time.Duration, len(res.Clocks)), Ops: res.Ops, Links: res.Links, Calls: callsOf(res.Calls), Seed: int64(res.Seed)}, marks: res.Marks}
	for i, ns := range res.Clocks {
		rep.PE[i] = time.Duration(ns)
		rep.Elapsed = max(rep.Elapsed, rep.PE[i])
	}
	return rep, err
}
