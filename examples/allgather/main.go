// Command allgather mirrors CANN SHMEM's examples/allgather: every PE
// contributes M elements, FCollect gathers them on every PE, the result is
// checked element by element against a golden result computed
// independently, and the mean time per allgather for each M goes to a CSV
// file (columns M,N,Time(us)) and a table on stdout.
//
//	go run ./examples/allgather -pes 4 -type float16
//	shmemrun -np 4 go run ./examples/allgather -type float16
//	go run ./examples/allgather -pes 4096 -model tcp
//	examples/allgather/run.sh -pes 4 -type float16_t   # CANN SHMEM's way
//
// CANN SHMEM's arguments work too: -ipport tcp://ip:port with -pes, -rank
// (the index on this host), -fpe (the first PE on this host) and -gnpus
// start one process as PE fpe+rank; SHMEM_JOB_SECRET keys TLS, or
// SMEM_CONF_STORE_TLS_ENABLE=0 turns it off.
//
// With -model (shm, tcp or a JSON model file, see sim.LoadModel) the
// times are the simulator's prediction in virtual time, not measured, for
// the sizes up to 256 KiB gathered per PE.
//
// Without -pes, under a launcher (SHMEM_RANK set), each process is one PE
// joined with shmem.Init; PE 0 writes the CSV and the table.
package main

import (
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"text/tabwriter"
	"time"
	"unsafe"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/sim"
)

const (
	seed    = 20240601
	warmup  = 10
	heapMiB = 64
	maxExp  = 14 // M up to 16·2^14 elements per PE
)

// goldenDir is -golden: where run.sh's golden files are, or "".
var goldenDir string

type result struct {
	m, n int
	us   float64
}

func main() {
	pes := flag.Int("pes", 4, "number of PEs to simulate (any N >= 1)")
	typ := flag.String("type", "int32", "element type: int32_t, float16_t or bfloat16_t (CANN SHMEM's names), or int32, float16, bfloat16")
	iters := flag.Int("iters", 50, "allgathers per size; the first 10 are warm-up and not timed")
	out := flag.String("out", "result.csv", "CSV file for M,N,Time(us)")
	model := flag.String("model", "", "predict the times with the simulator's cost model: shm, tcp or a JSON model file")
	var ca cannArgs
	flag.StringVar(&ca.ipport, "ipport", "", "CANN SHMEM's tcp://ip:port of PE 0: run as PE fpe+rank of -pes processes meeting there")
	flag.IntVar(&ca.rank, "rank", 0, "with -ipport: this process's index among the -gnpus started on this host")
	flag.IntVar(&ca.fpe, "fpe", 0, "with -ipport: the PE number of index 0 on this host")
	flag.IntVar(&ca.gnpus, "gnpus", 0, "with -ipport: processes started on this host (0: not checked)")
	flag.StringVar(&goldenDir, "golden", "", "also check each result against the golden files in this directory (run.sh's)")
	genDir := flag.String("gen-golden", "", "write the golden files for -pes and -type to this directory and exit")
	flag.Parse()
	pesSet := false
	flag.Visit(func(f *flag.Flag) { pesSet = pesSet || f.Name == "pes" })
	// Processes mode: CANN SHMEM's -ipport, or a launcher gave this
	// process a rank (SHMEM_RANK, or torchrun's RANK with
	// SHMEM_UID_SESSION_ID) and -pes did not ask for a simulation.
	procs := ca.ipport != "" || !pesSet && (os.Getenv("SHMEM_RANK") != "" || os.Getenv("RANK") != "")
	if *pes < 1 || *iters <= warmup {
		fmt.Fprintf(os.Stderr, "allgather: need -pes >= 1 and -iters > %d\n", warmup)
		os.Exit(2)
	}
	var res []result
	var err error
	var m sim.Model
	var initOpts []shmem.Option
	*typ, err = canonicalType(*typ)
	switch {
	case err != nil:
	case *genDir != "":
		err = genFor(*genDir, *pes, *typ)
		if err == nil {
			return
		}
	case *model != "":
		m, err = loadModel(*model)
	case ca.ipport != "":
		initOpts, err = ca.initOptions(*pes)
	}
	switch {
	case err != nil:
	case *model != "" && *typ == "int32":
		res, err = predict(*pes, m, func(r *rand.Rand) int32 { return int32(r.IntN(10)) })
	case *model != "" && *typ == "float16":
		res, err = predict(*pes, m, func(r *rand.Rand) shmem.Float16 { return shmem.NewFloat16(r.Float32() * 10) })
	case *model != "" && *typ == "bfloat16":
		res, err = predict(*pes, m, func(r *rand.Rand) shmem.BFloat16 { return shmem.NewBFloat16(r.Float32() * 10) })
	case *typ == "int32":
		res, err = run(*pes, procs, initOpts, *iters, func(r *rand.Rand) int32 { return int32(r.IntN(10)) })
	case *typ == "float16":
		res, err = run(*pes, procs, initOpts, *iters, func(r *rand.Rand) shmem.Float16 { return shmem.NewFloat16(r.Float32() * 10) })
	case *typ == "bfloat16":
		res, err = run(*pes, procs, initOpts, *iters, func(r *rand.Rand) shmem.BFloat16 { return shmem.NewBFloat16(r.Float32() * 10) })
	default:
		err = fmt.Errorf("unknown -type %q (int32, float16 or bfloat16)", *typ)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "allgather:", err)
		os.Exit(1)
	}
	if res == nil {
		return // a process other than PE 0: its checks passed
	}
	n := res[0].n
	if err := write(*out, res); err != nil {
		fmt.Fprintln(os.Stderr, "allgather:", err)
		os.Exit(1)
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "M (elems/PE)\tN (PEs)\tTime (us)\t\n")
	for _, r := range res {
		fmt.Fprintf(tw, "%d\t%d\t%.2f\t\n", r.m, r.n, r.us)
	}
	tw.Flush()
	if *model != "" {
		fmt.Printf("times predicted by model %s; ", m.Name)
	}
	fmt.Printf("all results match the golden data (%s, %d PEs); wrote %s\n", *typ, n, *out)
}

// input is PE pe's M values: uniform in [0, 10) from a generator seeded by
// the fixed seed, the PE and M, so the golden side can regenerate them.
func input[T shmem.Elem](pe, m int, gen func(*rand.Rand) T) []T {
	r := rand.New(rand.NewPCG(seed, uint64(pe)<<32|uint64(m)))
	v := make([]T, m)
	for i := range v {
		v[i] = gen(r)
	}
	return v
}

func sizes(n, elem int) []int {
	var ms []int
	for i := 0; i <= maxExp; i++ {
		m := 16 << i
		if int64(m)*int64(elem)*int64(n+1) > heapMiB<<20/2 {
			break
		}
		ms = append(ms, m)
	}
	return ms
}

// run measures every size on n simulated PEs, or, when procs is set, as
// this process's PE of the world the launcher describes. It returns nil
// results (and no error) on every process but PE 0's.
func run[T shmem.Elem](n int, procs bool, initOpts []shmem.Option, iters int, gen func(*rand.Rand) T) ([]result, error) {
	var zero T
	elem := int(unsafe.Sizeof(zero))
	var ms []int
	var times []float64
	var mu sync.Mutex
	body := func(p *shmem.PE) error {
		return measure(p, ms, iters, gen, func(k int, us float64) {
			mu.Lock()
			times[k] = us
			mu.Unlock()
		})
	}
	prepare := func(n int) error {
		ms = sizes(n, elem)
		times = make([]float64, len(ms))
		if len(ms) == 0 {
			return fmt.Errorf("%d PEs do not fit a %d MiB heap", n, heapMiB)
		}
		return nil
	}
	if procs {
		p, err := shmem.Init(context.Background(), append(initOpts, shmem.WithHeapSize(heapMiB<<20))...)
		if err != nil {
			return nil, err
		}
		n = p.NPEs()
		if err := prepare(n); err != nil {
			return nil, err
		}
		// The error-exit pattern: the body returns at its first error and
		// Finalize runs on every path; its error says what happened to
		// the world (a PE that failed, a GlobalExit).
		if err := errors.Join(body(p), p.Finalize()); err != nil {
			return nil, err
		}
		if p.MyPE() != 0 {
			return nil, nil
		}
	} else {
		if err := prepare(n); err != nil {
			return nil, err
		}
		if err := sim.Run(n, body, sim.WithHeapSize(heapMiB<<20)); err != nil {
			return nil, err
		}
	}
	res := make([]result, len(ms))
	for k, m := range ms {
		res[k] = result{m: m, n: n, us: times[k]}
	}
	return res, nil
}

// measure runs the allgathers of every size on PE p, checks each result
// against the golden data and has PE 0 report the mean time per size.
func measure[T shmem.Elem](p *shmem.PE, ms []int, iters int, gen func(*rand.Rand) T, report func(k int, us float64)) error {
	me, n := p.MyPE(), p.NPEs()
	for k, m := range ms {
		src, err := shmem.Malloc[T](p, m)
		if err != nil {
			return err
		}
		dst, err := shmem.Malloc[T](p, m*n)
		if err != nil {
			return err
		}
		copy(src.Local(p), input(me, m, gen))
		var start time.Time
		for it := 0; it < iters; it++ {
			if it == warmup {
				if err := p.BarrierAll(); err != nil {
					return err
				}
				start = time.Now()
			}
			if err := shmem.FCollect(p.TeamWorld(), dst, src); err != nil {
				return err
			}
		}
		el := time.Since(start)
		if err := golden(me, m, n, dst.Local(p), gen); err != nil {
			return err
		}
		if goldenDir != "" {
			if err := checkGoldenFile(goldenDir, me, m, dst.Local(p)); err != nil {
				return err
			}
		}
		if me == 0 {
			report(k, float64(el.Microseconds())/float64(iters-warmup))
		}
		if err := errors.Join(shmem.Free(p, dst), shmem.Free(p, src)); err != nil {
			return err
		}
	}
	return nil
}

// golden regenerates every PE's input and compares it with what PE me
// gathered, reporting the first mismatching source PE and index.
func golden[T shmem.Elem](me, m, n int, got []T, gen func(*rand.Rand) T) error {
	for q := 0; q < n; q++ {
		want := input(q, m, gen)
		for i, w := range want {
			if g := got[q*m+i]; g != w {
				return fmt.Errorf("M=%d: on PE %d, element %d from PE %d (index %d) is %v, want %v", m, me, i, q, q*m+i, g, w)
			}
		}
	}
	return nil
}

func write(path string, res []result) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	_ = w.Write([]string{"M", "N", "Time(us)"})
	for _, r := range res {
		_ = w.Write([]string{strconv.Itoa(r.m), strconv.Itoa(r.n), strconv.FormatFloat(r.us, 'f', 3, 64)})
	}
	w.Flush()
	return errors.Join(w.Error(), f.Close())
}
