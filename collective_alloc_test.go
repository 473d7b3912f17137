package shmem_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/sim"
)

// collAllocRuns is how many calls each collective's count averages over.
// Every PE makes the same calls in the same order, so they pair up.
const collAllocRuns = 100

// collBig is the large payload, in 8-byte elements per PE: 64 KiB, so
// that FCollect and Collect take the ring (their total exceeds 64 KiB),
// Broadcast sends two chunks and Reduce takes the ring reduce-scatter
// (beyond a doubling region of the 64 KiB scratch).
const collBig = 8 << 10

// TestCollectivesAllocateNothing: in their steady state the collectives
// allocate nothing per call, at 2 and 8 PEs, small and large: Broadcast,
// Collect, FCollect, Alltoall, Alltoalls (packed, strided source, strided
// destination), Reduce with every operator and each kind of kernel
// (integers of each width, floats, the 16-bit floats, complex), on
// TeamWorld, a split team of every PE and a half of the world, the
// barriers and syncs, and the point-to-point waits (WaitUntil in a ring,
// a lock taken in turn); with metrics on too. BenchmarkCollectives reports
// the same with -benchmem. AllocsPerRun runs on one CPU, so many waits
// take their slow way (registered, sleeping on the bell): that allocates
// nothing either, also when the calls alternate between collectives and
// teams (the case "mixed"). Eager delivery only: CI skips it under
// SHMEM_SIM_DELIVERY=lazy, whose held writes are copies. Not under the
// race detector (see raceEnabled).
func TestCollectivesAllocateNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's sync.Pool drops timers at random (see raceEnabled)")
	}
	for _, world := range []struct {
		n       int
		metered bool
	}{{2, false}, {8, false}, {2, true}} {
		name := fmt.Sprintf("pes=%d", world.n)
		opts := []sim.Option{sim.WithHeapSize(64 << 20)}
		if world.metered {
			name += "/metrics" // WithMetrics: every collective counted and timed
			opts = append(opts, sim.WithMetrics())
		}
		n := world.n
		t.Run(name, func(t *testing.T) {
			run(t, n, func(p *shmem.PE) error {
				cases, err := collAllocCases(p)
				if err != nil {
					return err
				}
				// Every PE counts the whole process's allocations, so PE 0
				// alone reports them, each collective that allocates.
				var allocated []error
				for _, c := range cases {
					var callErr error
					allocs := testing.AllocsPerRun(collAllocRuns, func() {
						if err := c.call(); err != nil && callErr == nil {
							callErr = err
						}
					})
					if callErr != nil {
						return fmt.Errorf("%s: %w", c.name, callErr)
					}
					if allocs != 0 && p.MyPE() == 0 {
						allocated = append(allocated, fmt.Errorf("%s: %v allocations per call, want 0", c.name, allocs))
					}
					// The halves of the world run their teams' cases
					// apart: a half that finished first must not go on
					// (to Finalize, say) while the other still counts.
					if err := p.SyncAll(); err != nil {
						return err
					}
				}
				return errors.Join(allocated...)
			}, opts...)
		})
	}
}

// collAllocCase is one collective call of TestCollectivesAllocateNothing.
type collAllocCase struct {
	name string
	call func() error
}

// collAllocCases allocates the symmetric objects of every case (a
// collective sequence of its own, the same on every PE) and returns the
// calls.
func collAllocCases(p *shmem.PE) ([]collAllocCase, error) {
	n, me := p.NPEs(), p.MyPE()
	w := p.TeamWorld()
	full, err := w.SplitStrided(0, 1, n)
	if err != nil {
		return nil, err
	}
	lower, err := w.SplitStrided(0, 1, n/2)
	if err != nil {
		return nil, err
	}
	upper, err := w.SplitStrided(n/2, 1, n-n/2)
	if err != nil {
		return nil, err
	}
	mine := lower
	if mine == nil {
		mine = upper
	}
	i64src, err := shmem.Calloc[int64](p, collBig*n)
	if err != nil {
		return nil, err
	}
	i64dst, err := shmem.Calloc[int64](p, collBig*n)
	if err != nil {
		return nil, err
	}
	i32, err := shmem.Calloc[int32](p, 16)
	if err != nil {
		return nil, err
	}
	u8, err := shmem.Calloc[uint8](p, 16)
	if err != nil {
		return nil, err
	}
	f64, err := shmem.Calloc[float64](p, 16)
	if err != nil {
		return nil, err
	}
	f32, err := shmem.Calloc[float32](p, 16)
	if err != nil {
		return nil, err
	}
	h16, err := shmem.Calloc[shmem.Float16](p, 16)
	if err != nil {
		return nil, err
	}
	b16, err := shmem.Calloc[shmem.BFloat16](p, 16)
	if err != nil {
		return nil, err
	}
	flag, err := shmem.Calloc[int64](p, 2) // a ring's flag, and a lock
	if err != nil {
		return nil, err
	}
	src, dst := i64src.Slice(0, 1), i64dst.Slice(0, 1)
	var seq int64
	bigSrc, bigDst := i64src.Slice(0, collBig), i64dst.Slice(0, collBig)
	cases := []collAllocCase{
		{"BarrierAll", p.BarrierAll},
		{"SyncAll", p.SyncAll},
		{"Team.Barrier", w.Barrier},
		{"Team.Sync", w.Sync},
		{"Broadcast 8 B", func() error { return shmem.Broadcast(w, dst, src, 0) }},
		{"Broadcast 64 KiB", func() error { return shmem.Broadcast(w, bigDst, bigSrc, n-1) }},
		{"FCollect 8 B", func() error { return shmem.FCollect(w, i64dst.Slice(0, n), src) }},
		{"FCollect 64 KiB", func() error { return shmem.FCollect(w, i64dst, bigSrc) }},
		// Contributions differ: PE r gives r+1 elements (r+1 KiB large).
		{"Collect 8 B", func() error { return shmem.Collect(w, i64dst, i64src.Slice(0, me+1)) }},
		{"Collect 64 KiB", func() error { return shmem.Collect(w, i64dst, i64src.Slice(0, (me+1)<<10)) }},
		{"Alltoall 8 B", func() error { return shmem.Alltoall(w, i64dst.Slice(0, n), i64src.Slice(0, n)) }},
		{"Alltoall 64 KiB", func() error { return shmem.Alltoall(w, i64dst, i64src) }},
		{"Alltoalls packed", func() error { return shmem.Alltoalls(w, i64dst, i64src, 1, 1, 4) }},
		{"Alltoalls strided source", func() error { return shmem.Alltoalls(w, i64dst, i64src, 1, 3, 4) }},
		{"Alltoalls strided source 64 KiB", func() error { return shmem.Alltoalls(w, i64dst, i64src, 1, 2, collBig/2) }},
		{"Alltoalls strided destination", func() error { return shmem.Alltoalls(w, i64dst, i64src, 2, 1, 4) }},
		{"Reduce 64 KiB", func() error { return shmem.Reduce(w, shmem.OpSum, bigDst, bigSrc) }},
		{"Reduce in place", func() error { return shmem.Reduce(w, shmem.OpMax, src, src) }},
		{"Reduce float64 sum", func() error { return shmem.Reduce(w, shmem.OpSum, f64.Slice(8, 16), f64.Slice(0, 8)) }},
		{"Reduce float32 min", func() error { return shmem.Reduce(w, shmem.OpMin, f32.Slice(8, 16), f32.Slice(0, 8)) }},
		{"Reduce Float16 sum", func() error { return shmem.Reduce(w, shmem.OpSum, h16.Slice(8, 16), h16.Slice(0, 8)) }},
		{"Reduce Float16 prod", func() error { return shmem.Reduce(w, shmem.OpProd, h16.Slice(8, 16), h16.Slice(0, 8)) }},
		{"Reduce BFloat16 max", func() error { return shmem.Reduce(w, shmem.OpMax, b16.Slice(8, 16), b16.Slice(0, 8)) }},
		{"Reduce BFloat16 min", func() error { return shmem.Reduce(w, shmem.OpMin, b16.Slice(8, 16), b16.Slice(0, 8)) }},
		{"Reduce int32 and", func() error { return shmem.Reduce(w, shmem.OpAnd, i32.Slice(8, 16), i32.Slice(0, 8)) }},
		{"Reduce uint8 xor", func() error { return shmem.Reduce(w, shmem.OpXor, u8.Slice(8, 16), u8.Slice(0, 8)) }},
		{"ReduceComplex complex64 sum", func() error { return shmem.ReduceComplex(w, shmem.OpSum, f32.Slice(8, 16), f32.Slice(0, 8)) }},
		{"ReduceComplex complex128 prod", func() error { return shmem.ReduceComplex(w, shmem.OpProd, f64.Slice(8, 16), f64.Slice(0, 8)) }},
	}
	for _, op := range []struct {
		name string
		op   shmem.Op
	}{{"sum", shmem.OpSum}, {"prod", shmem.OpProd}, {"min", shmem.OpMin}, {"max", shmem.OpMax},
		{"and", shmem.OpAnd}, {"or", shmem.OpOr}, {"xor", shmem.OpXor}} {
		cases = append(cases, collAllocCase{"Reduce int64 " + op.name, func() error { return shmem.Reduce(w, op.op, dst, src) }})
	}
	// Point-to-point synchronization waits register as collectives' do, on
	// a word of the heap: a ring of puts, each PE waiting for its
	// predecessor's, and a lock every PE takes in turn.
	cases = append(cases,
		collAllocCase{"WaitUntil ring", func() error {
			seq++
			if err := shmem.P(p, flag.Slice(0, 1), seq, (me+1)%n); err != nil {
				return err
			}
			return shmem.WaitUntil(p, flag.Slice(0, 1), shmem.CmpGE, seq)
		}},
		collAllocCase{"SetLock, ClearLock", func() error {
			if err := shmem.SetLock(p, flag.Slice(1, 2)); err != nil {
				return err
			}
			return shmem.ClearLock(p, flag.Slice(1, 2))
		}},
	)
	// One call of each kind in turn, as a program makes them: the waits
	// that register (most, on one CPU) alternate between calls and teams.
	cases = append(cases, collAllocCase{"mixed", func() error {
		if err := shmem.Broadcast(w, dst, src, 0); err != nil {
			return err
		}
		if err := shmem.Reduce(w, shmem.OpSum, dst, src); err != nil {
			return err
		}
		if err := shmem.FCollect(full, i64dst.Slice(0, n), src); err != nil {
			return err
		}
		if err := shmem.Alltoall(w, i64dst.Slice(0, n), i64src.Slice(0, n)); err != nil {
			return err
		}
		if err := full.Sync(); err != nil {
			return err
		}
		return p.BarrierAll()
	}})
	// A split team of every PE (not a root team: its peers' state is read
	// differently) and the caller's half of the world.
	for _, tm := range []struct {
		name string
		t    *shmem.Team
	}{{"split team", full}, {"half team", mine}} {
		cases = append(cases,
			collAllocCase{tm.name + " Barrier", tm.t.Barrier},
			collAllocCase{tm.name + " Sync", tm.t.Sync},
			collAllocCase{tm.name + " Broadcast", func() error { return shmem.Broadcast(tm.t, dst, src, 0) }},
			collAllocCase{tm.name + " FCollect", func() error { return shmem.FCollect(tm.t, i64dst.Slice(0, n), src) }},
			collAllocCase{tm.name + " Alltoall", func() error {
				return shmem.Alltoall(tm.t, i64dst.Slice(0, tm.t.NPEs()), i64src.Slice(0, tm.t.NPEs()))
			}},
			collAllocCase{tm.name + " Reduce", func() error { return shmem.Reduce(tm.t, shmem.OpSum, dst, src) }},
		)
	}
	return cases, nil
}
