// Command simplot predicts collective times with the simulator's cost
// models from 2 PEs up, one line per collective algorithm, and writes them
// as CSV and a log-log plot (PNG), as BENCHMARKS.md shows them:
//
//	cd bench/simplot && go run . -max 4096 -csv ../simplot.csv -png ../simplot.png
//	cd bench/simplot && go run . -validate ../sim-validation.csv
//
// Each world runs every collective once, each after a barrier that lines
// the PEs up, and a collective's time is the slowest PE's progress over
// it (sim.MeasureSteps). The algorithms that are linear in the PE count
// (ring allgather, ring reduce, all-to-all) stop at -maxlinear PEs: they
// cost the simulator n² messages.
package main

import (
	"encoding/csv"
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/sim"
)

// An algorithm is one line of the plot: a collective with a size that
// makes the team package choose that algorithm.
type algorithm struct {
	name   string
	linear bool // stop at -maxlinear
	// words returns the int64 words of symmetric memory it needs.
	words func(n int) int
	run   func(p *shmem.PE, buf shmem.Sym[int64]) error
}

// ringBytes is the per-PE size that puts an allgather over the ring: the
// team package's Bruck covers totals up to 64 KiB.
func ringBytes(n int) int { return 64<<10/n + 8 }

var algorithms = []algorithm{
	{name: "Barrier (dissemination)", words: func(int) int { return 0 },
		run: func(p *shmem.PE, _ shmem.Sym[int64]) error { return p.BarrierAll() }},
	{name: "Broadcast 8 B (binomial tree)", words: func(int) int { return 2 },
		run: func(p *shmem.PE, b shmem.Sym[int64]) error {
			return shmem.Broadcast(p.TeamWorld(), b.Slice(1, 2), b.Slice(0, 1), 0)
		}},
	{name: "FCollect 8 B/PE (Bruck)", words: func(n int) int { return 1 + n },
		run: func(p *shmem.PE, b shmem.Sym[int64]) error {
			return shmem.FCollect(p.TeamWorld(), b.Slice(1, 1+p.NPEs()), b.Slice(0, 1))
		}},
	{name: "FCollect 64 KiB total (ring)", linear: true, words: func(n int) int { return (n + 1) * ringBytes(n) / 8 },
		run: func(p *shmem.PE, b shmem.Sym[int64]) error {
			w := ringBytes(p.NPEs()) / 8
			return shmem.FCollect(p.TeamWorld(), b.Slice(w, w*(p.NPEs()+1)), b.Slice(0, w))
		}},
	{name: "Reduce 1 KiB (recursive doubling)", words: func(int) int { return 256 },
		run: func(p *shmem.PE, b shmem.Sym[int64]) error {
			return shmem.Reduce(p.TeamWorld(), shmem.OpSum, b.Slice(128, 256), b.Slice(0, 128))
		}},
	{name: "Reduce 256 KiB (ring)", linear: true, words: func(int) int { return 2 * 32768 },
		run: func(p *shmem.PE, b shmem.Sym[int64]) error {
			return shmem.Reduce(p.TeamWorld(), shmem.OpSum, b.Slice(32768, 65536), b.Slice(0, 32768))
		}},
	{name: "Alltoall 8 B/PE (direct)", linear: true, words: func(n int) int { return 2 * n },
		run: func(p *shmem.PE, b shmem.Sym[int64]) error {
			n := p.NPEs()
			return shmem.Alltoall(p.TeamWorld(), b.Slice(n, 2*n), b.Slice(0, n))
		}},
}

// point is one prediction.
type point struct {
	model, alg string
	npes       int
	t          time.Duration
}

func main() {
	maxN := flag.Int("max", 4096, "largest world (a power of two)")
	maxLinear := flag.Int("maxlinear", 512, "largest world for the algorithms linear in the PE count")
	csvOut := flag.String("csv", "simplot.csv", "CSV output: model,algorithm,npes,ns")
	pngOut := flag.String("png", "simplot.png", "PNG output")
	check := flag.String("validate", "", "instead: compare the shmem-perf CSV rows in FILE (transport labels shm-N, tcp-N) with predictions, as a Markdown table")
	cores := flag.Int("cores", 2, "with -validate: the cores of the machine that measured")
	flag.Parse()
	if *check != "" {
		if err := validate(*check, *cores, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "simplot:", err)
			os.Exit(1)
		}
		return
	}
	var pts []point
	for _, m := range []sim.Model{sim.ModelSHM(), sim.ModelTCP()} {
		for n := 2; n <= *maxN; n *= 2 {
			start := time.Now()
			got, err := predict(m, n, n <= *maxLinear)
			if err != nil {
				fmt.Fprintf(os.Stderr, "simplot: %s, %d PEs: %v\n", m.Name, n, err)
				os.Exit(1)
			}
			pts = append(pts, got...)
			fmt.Fprintf(os.Stderr, "%s %5d PEs: %v\n", m.Name, n, time.Since(start).Round(time.Millisecond))
		}
	}
	if err := writeCSV(*csvOut, pts); err != nil {
		fmt.Fprintln(os.Stderr, "simplot:", err)
		os.Exit(1)
	}
	if err := drawPNG(*pngOut, pts); err != nil {
		fmt.Fprintln(os.Stderr, "simplot:", err)
		os.Exit(1)
	}
}

// predict runs every algorithm once on n PEs under m.
func predict(m sim.Model, n int, linear bool) ([]point, error) {
	var algs []algorithm
	words := 1
	for _, a := range algorithms {
		if a.linear && !linear {
			continue
		}
		algs = append(algs, a)
		words = max(words, a.words(n))
	}
	bufs := make([]shmem.Sym[int64], n) // by PE: each goroutine writes its own
	steps := []func(*shmem.PE) error{func(p *shmem.PE) error {
		var err error
		bufs[p.MyPE()], err = shmem.Calloc[int64](p, words)
		return err
	}}
	for _, a := range algs {
		steps = append(steps, func(p *shmem.PE) error { return p.BarrierAll() },
			func(p *shmem.PE) error { return a.run(p, bufs[p.MyPE()]) })
	}
	heap := 8*words + 64*n + 2<<20
	rep, err := sim.MeasureSteps(n, steps, sim.WithModel(m), sim.WithHeapSize(heap), sim.WithNodes(1))
	if err != nil {
		return nil, err
	}
	var pts []point
	for i, a := range algs {
		pts = append(pts, point{model: m.Name, alg: a.name, npes: n, t: rep.Steps[2+2*i]})
	}
	return pts, nil
}

func writeCSV(path string, pts []point) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	_ = w.Write([]string{"model", "algorithm", "npes", "ns"})
	for _, p := range pts {
		_ = w.Write([]string{p.model, p.alg, strconv.Itoa(p.npes), strconv.FormatInt(p.t.Nanoseconds(), 10)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
