package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/goshmem/shmem"
)

// The OSU constants, as in bench/oshmem/osu.c.
const (
	smallLimit     = 8192 // bytes (p2p) or elements (collectives)
	p2pSkip        = 1000
	p2pIters       = 10000
	p2pSkipLarge   = 10
	p2pItersLarge  = 100
	collSkip       = 200
	collIters      = 1000
	collSkipLarge  = 10
	collItersLarge = 100
	mrWindow       = 500 // puts per size before the one quiet
	mrSkip         = 50
)

// runner holds one PE's benchmark state.
type runner struct {
	p      *shmem.PE
	c      config
	me, n  int
	times  shmem.Sym[float64] // one slot per PE, gathered at PE 0
	out    io.Writer          // CSV rows
	table  io.Writer          // readable rows
	mstats runtime.MemStats
	sink   int64
}

func benchAll(p *shmem.PE, c config, stdout, stderr io.Writer) error {
	r := &runner{p: p, c: c, me: p.MyPE(), n: p.NPEs(), out: stdout, table: stderr}
	if r.n < 2 || r.n%2 != 0 {
		return fmt.Errorf("needs an even number of PEs, got %d", r.n)
	}
	if c.profile != "" && c.pes == 0 {
		stop, err := startProfile(fmt.Sprintf("%s.%d", c.profile, r.me))
		if err != nil {
			return err
		}
		defer stop()
	}
	var err error
	if r.times, err = shmem.Calloc[float64](p, r.n); err != nil {
		return err
	}
	if r.me == 0 {
		if c.csv {
			fmt.Fprintln(stdout, "impl,transport,bench,size_bytes,iterations,latency_us,bandwidth_MBps")
		}
		fmt.Fprintf(stderr, "# goshmem %s, %d PEs\n%-20s %10s %8s %12s %12s %9s\n",
			c.label, r.n, "bench", "size", "iters", "latency_us", "MB/s", "allocs/op")
	}
	for _, b := range c.sel {
		if err := r.bench(b); err != nil {
			return fmt.Errorf("%s: %w", b, err)
		}
	}
	if err := p.BarrierAll(); err != nil {
		return err
	}
	if r.me == 0 {
		fmt.Fprintln(stderr, "shmem-perf: done")
	}
	return nil
}

func (r *runner) bench(name string) error {
	switch name {
	case "put", "get", "put_nb", "get_nb":
		return r.p2p(name)
	case "put_mr":
		return r.putMR()
	case "barrier":
		return r.barrier()
	case "tcp_rtt":
		return r.rawTCP()
	case "tls_bw_ceiling":
		return r.tlsCeiling()
	case "broadcast", "fcollect", "reduce":
		return collective[int64](r, name)
	case "reduce_f64":
		return collective[float64](r, name)
	}
	return r.atomic(name)
}

// row prints one result from PE 0. allocs is the process's allocation count
// over the timed loop divided by its operations.
func (r *runner) row(bench string, size, iters int, lat, bw, allocs float64) {
	if r.me != 0 {
		return
	}
	if r.c.csv {
		fmt.Fprintf(r.out, "goshmem,%s,%s,%d,%d,%.4f,%.2f\n", r.c.label, bench, size, iters, lat, bw)
	}
	fmt.Fprintf(r.table, "%-20s %10d %8d %12.4f %12.2f %9.2f\n", bench, size, iters, lat, bw, allocs)
}

// mallocs reads the process's allocation count; it is called only outside
// the timed loops.
func (r *runner) mallocs() uint64 {
	runtime.ReadMemStats(&r.mstats)
	return r.mstats.Mallocs
}

// timeLoop runs call skip+iters times and returns the mean latency of the
// last iters calls in µs and their allocations per call. With between set,
// only the calls are timed and between runs untimed after each (OSU's
// collectives); without, the whole loop is timed (OSU's point-to-point
// benchmarks).
func (r *runner) timeLoop(skip, iters int, call func(i int) error, between func() error) (lat, allocs float64, err error) {
	var total time.Duration
	var m0 uint64
	var t0 time.Time
	if between == nil {
		// The whole loop is timed: nothing but the call in it (the
		// warm-up is a loop of its own, so the timed one tests nothing
		// else).
		if err := calls(call, 0, skip); err != nil {
			return 0, 0, err
		}
		m0 = r.mallocs()
		t0 = time.Now()
		if err := calls(call, skip, skip+iters); err != nil {
			return 0, 0, err
		}
		total = time.Since(t0)
		return us(total) / float64(iters), float64(r.mallocs()-m0) / float64(iters), nil
	}
	for i := 0; i < skip+iters; i++ {
		if i == skip {
			m0 = r.mallocs()
		}
		c0 := time.Now()
		if err := call(i); err != nil {
			return 0, 0, err
		}
		if i >= skip {
			total += time.Since(c0)
		}
		if err := between(); err != nil {
			return 0, 0, err
		}
	}
	return us(total) / float64(iters), float64(r.mallocs()-m0) / float64(iters), nil
}

// calls calls call(i) for i in [from, to): the timed loop, in a function
// of its own so that nothing but i, to and call is live across the calls
// (in timeLoop the compiler reloaded t0 from the stack every iteration).
//
//go:noinline
func calls(call func(int) error, from, to int) error {
	for i := from; i < to; i++ {
		if err := call(i); err != nil {
			return err
		}
	}
	return nil
}

// meanOverPEs gathers each PE's v at PE 0 and returns their mean there.
func (r *runner) meanOverPEs(v float64) (float64, error) {
	if err := r.p.BarrierAll(); err != nil { // PE 0 read the last round
		return 0, err
	}
	if err := shmem.P(r.p, r.times.Slice(r.me, r.me+1), v, 0); err != nil {
		return 0, err
	}
	if err := r.p.BarrierAll(); err != nil {
		return 0, err
	}
	sum := 0.0
	for _, t := range r.times.Local(r.p) {
		sum += t
	}
	return sum / float64(r.n), nil
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

// p2pCounts is the OSU rule (skip, loop, skip_large and loop_large of
// osu_oshm_put.c): many warm-ups and iterations for small messages, 10
// warm-ups and 100 iterations for large ones; -iters replaces the timed
// count.
func (r *runner) p2pCounts(size int) (skip, iters int) {
	skip, iters = p2pSkipLarge, p2pItersLarge
	if size <= smallLimit {
		skip, iters = p2pSkip, p2pIters
	}
	if r.c.iters > 0 {
		iters = r.c.iters
	}
	return skip, iters
}

// p2p: PE 0 drives, PE 1 is passive; one iteration is one complete
// operation (a blocking get, or a put or nbi op followed by Quiet).
func (r *runner) p2p(name string) error {
	p := r.p
	sbuf, err := shmem.Malloc[byte](p, r.c.max)
	if err != nil {
		return err
	}
	rbuf, err := shmem.Calloc[byte](p, r.c.max)
	if err != nil {
		return err
	}
	for size := r.c.min; size <= r.c.max; size *= 2 {
		skip, iters := r.p2pCounts(size)
		fill := byte(size&0x7f) | 1
		src, dst := sbuf.Local(p)[:size], rbuf.Local(p)[:size]
		for i := range src {
			src[i] = fill
		}
		remoteS, remoteR := sbuf.Slice(0, size), rbuf.Slice(0, size)
		if err := p.BarrierAll(); err != nil {
			return err
		}
		if r.me == 0 {
			// The operation is chosen before the loop, as a C benchmark
			// calls it: the timed iteration is the call (and Quiet), not
			// a switch on the benchmark's name.
			var call func(int) error
			switch name {
			case "put":
				call = func(int) error {
					if err := shmem.Put(p, remoteR, src, 1); err != nil {
						return err
					}
					return p.Quiet()
				}
			case "get":
				call = func(int) error { return shmem.Get(p, dst, remoteS, 1) }
			case "put_nb":
				call = func(int) error {
					if err := shmem.PutNBI(p, remoteR, src, 1); err != nil {
						return err
					}
					return p.Quiet()
				}
			case "get_nb":
				call = func(int) error {
					if err := shmem.GetNBI(p, dst, remoteS, 1); err != nil {
						return err
					}
					return p.Quiet()
				}
			default:
				return fmt.Errorf("unknown bench %q", name)
			}
			lat, allocs, err := r.timeLoop(skip, iters, call, nil)
			if err != nil {
				return err
			}
			r.row(name, size, iters, lat, float64(size)/lat, allocs)
		}
		if err := p.BarrierAll(); err != nil {
			return err
		}
		checker := 0
		if name == "put" || name == "put_nb" {
			checker = 1
		}
		if r.me == checker && (dst[0] != fill || dst[size-1] != fill) {
			return fmt.Errorf("size %d: data mismatch on PE %d", size, r.me)
		}
	}
	return free(p, sbuf, rbuf)
}

// putMR: PE i < n/2 streams mrWindow puts to i+n/2, then one Quiet;
// latency is the senders' mean time per put, bandwidth the sum of their
// rates.
func (r *runner) putMR() error {
	p := r.p
	half := r.n / 2
	sbuf, err := shmem.Malloc[byte](p, r.c.max)
	if err != nil {
		return err
	}
	rbuf, err := shmem.Calloc[byte](p, r.c.max)
	if err != nil {
		return err
	}
	for size := r.c.min; size <= r.c.max; size *= 2 {
		src, dst := sbuf.Local(p)[:size], rbuf.Slice(0, size)
		perPut, rate, allocs := 0.0, 0.0, 0.0
		if err := p.BarrierAll(); err != nil {
			return err
		}
		if r.me < half {
			peer := r.me + half
			for i := 0; i < mrSkip; i++ {
				if err := shmem.Put(p, dst, src, peer); err != nil {
					return err
				}
			}
			if err := p.Quiet(); err != nil {
				return err
			}
			m0 := r.mallocs()
			t0 := time.Now()
			for i := 0; i < mrWindow; i++ {
				if err := shmem.Put(p, dst, src, peer); err != nil {
					return err
				}
			}
			if err := p.Quiet(); err != nil {
				return err
			}
			perPut = us(time.Since(t0)) / mrWindow
			allocs = float64(r.mallocs()-m0) / mrWindow
			rate = float64(size) / perPut
		}
		if err := p.BarrierAll(); err != nil {
			return err
		}
		lat, err := r.meanOverPEs(perPut)
		if err != nil {
			return err
		}
		bw, err := r.meanOverPEs(rate)
		if err != nil {
			return err
		}
		r.row("put_mr", size, mrWindow, lat*float64(r.n)/float64(half), bw*float64(r.n), allocs)
	}
	return free(p, sbuf, rbuf)
}

// atomic: PE 0 targets PE 1's int64; each call is blocking, or for the
// non-fetching ones completes by the trailing barrier, as in OSU.
func (r *runner) atomic(name string) error {
	p := r.p
	atom, err := shmem.Calloc[int64](p, 1)
	if err != nil {
		return err
	}
	if err := p.BarrierAll(); err != nil {
		return err
	}
	if r.me == 0 {
		// Chosen before the loop, as in p2p; a fetched value goes to
		// r.sink so that the call is not dead code.
		var call func(i int) error
		switch name {
		case "atomic_fetch_add":
			call = func(int) error { v, err := shmem.AtomicFetchAdd(p, atom, 1, 1); r.sink += v; return err }
		case "atomic_add":
			call = func(int) error { return shmem.AtomicAdd(p, atom, 1, 1) }
		case "atomic_compare_swap":
			call = func(int) error { v, err := shmem.AtomicCompareSwap(p, atom, 0, 0, 1); r.sink += v; return err }
		case "atomic_swap":
			call = func(i int) error { v, err := shmem.AtomicSwap(p, atom, int64(i), 1); r.sink += v; return err }
		case "atomic_fetch":
			call = func(int) error { v, err := shmem.AtomicFetch(p, atom, 1); r.sink += v; return err }
		case "atomic_set":
			call = func(i int) error { return shmem.AtomicSet(p, atom, int64(i), 1) }
		case "atomic_inc":
			call = func(int) error { return shmem.AtomicInc(p, atom, 1) }
		case "atomic_fetch_inc":
			call = func(int) error { v, err := shmem.AtomicFetchInc(p, atom, 1); r.sink += v; return err }
		default:
			return fmt.Errorf("unknown bench %q", name)
		}
		skip, iters := r.p2pCounts(8)
		lat, allocs, err := r.timeLoop(skip, iters, call, nil)
		if err != nil {
			return err
		}
		r.row(name, 8, iters, lat, 0, allocs)
	}
	if err := p.BarrierAll(); err != nil {
		return err
	}
	return shmem.Free(p, atom)
}

// barrier times each BarrierAll on every PE; PE 0 reports the mean.
func (r *runner) barrier() error {
	p := r.p
	if err := p.BarrierAll(); err != nil {
		return err
	}
	lat, allocs, err := r.timeLoop(collSkip, collIters, func(int) error { return p.BarrierAll() }, nil)
	if err != nil {
		return err
	}
	if lat, err = r.meanOverPEs(lat); err != nil {
		return err
	}
	r.row("barrier", 0, collIters, lat, 0, allocs)
	return nil
}

// collective times only the call on every PE, re-synchronising with an
// untimed barrier after each, as OSU does; sizes start at one element.
func collective[T int64 | float64](r *runner, name string) error {
	p := r.p
	team := p.TeamWorld()
	maxElems := r.c.max / 8
	src, err := shmem.Malloc[T](p, maxElems)
	if err != nil {
		return err
	}
	dst, err := shmem.Calloc[T](p, maxElems*r.n)
	if err != nil {
		return err
	}
	for i, s := 0, src.Local(p); i < len(s); i++ {
		s[i] = T(r.me + 1)
	}
	for size := 8; size <= r.c.max; size *= 2 {
		n := size / 8
		skip, iters := collSkip, collIters
		if n > smallLimit {
			skip, iters = collSkipLarge, collItersLarge
		}
		s, d := src.Slice(0, n), dst.Slice(0, n)
		if name == "fcollect" {
			d = dst.Slice(0, n*r.n)
		}
		if err := p.BarrierAll(); err != nil {
			return err
		}
		lat, allocs, err := r.timeLoop(skip, iters, func(int) error {
			switch name {
			case "broadcast":
				return shmem.Broadcast(team, d, s, 0)
			case "fcollect":
				return shmem.FCollect(team, d, s)
			}
			return shmem.Reduce(team, shmem.OpSum, d, s)
		}, p.BarrierAll)
		if err != nil {
			return err
		}
		if err := checkColl(r, name, d, n); err != nil {
			return err
		}
		if lat, err = r.meanOverPEs(lat); err != nil {
			return err
		}
		r.row(name, size, iters, lat, 0, allocs)
	}
	return free(p, src, dst)
}

// checkColl spot-checks the last result so a broken collective cannot
// produce a fast row.
func checkColl[T int64 | float64](r *runner, name string, d shmem.Sym[T], n int) error {
	got := d.Local(r.p)
	want, last := T(1), T(1)
	switch name {
	case "fcollect":
		last = T(r.n)
	case "reduce", "reduce_f64":
		want = T(r.n * (r.n + 1) / 2)
		last = want
	}
	if got[0] != want || got[len(got)-1] != last {
		return fmt.Errorf("%d elements: PE %d holds %v..%v, want %v..%v", n, r.me, got[0], got[len(got)-1], want, last)
	}
	return nil
}

func free[T shmem.Elem](p *shmem.PE, syms ...shmem.Sym[T]) error {
	for _, s := range syms {
		if err := shmem.Free(p, s); err != nil {
			return err
		}
	}
	return nil
}

// startProfile starts a CPU profile into path and returns what stops it.
func startProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
