package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/sim"
)

// validate reads shmem-perf CSV rows (impl,transport,bench,size_bytes,
// iterations,latency_us,…) whose transport label is "shm-N" or "tcp-N",
// predicts each row's collective on N PEs under the model of that name,
// with cores cores per node (the measuring machine's), and writes a
// Markdown table of measured against predicted times.
func validate(in string, cores int, out io.Writer) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "| collective | size | PEs | transport | measured µs | predicted µs | measured / predicted |")
	fmt.Fprintln(out, "|---|---:|---:|---|---:|---:|---:|")
	for _, r := range rows {
		if len(r) < 6 || r[0] != "goshmem" {
			continue
		}
		model, npes, ok := strings.Cut(r[1], "-")
		n, nerr := strconv.Atoi(npes)
		size, serr := strconv.Atoi(r[3])
		meas, merr := strconv.ParseFloat(r[5], 64)
		if !ok || nerr != nil || serr != nil || merr != nil {
			return fmt.Errorf("%s: bad row %q", in, r)
		}
		m := sim.ModelSHM()
		if model == "tcp" {
			m = sim.ModelTCP()
		}
		m.Cores = cores
		run, err := collective(r[2], size)
		if err != nil {
			return err
		}
		pred, err := predictOne(m, n, size, run)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "| %s | %d B | %d | %s | %.3g | %.3g | %.2f |\n", r[2], size, n, model, meas, pred, meas/pred)
	}
	return nil
}

// collective returns the shmem-perf bench's call on a buffer of int64
// words laid out as src (size bytes), then dst.
func collective(bench string, size int) (func(p *shmem.PE, b shmem.Sym[int64]) error, error) {
	w := max(1, size/8)
	switch bench {
	case "barrier":
		return func(p *shmem.PE, _ shmem.Sym[int64]) error { return p.BarrierAll() }, nil
	case "broadcast":
		return func(p *shmem.PE, b shmem.Sym[int64]) error {
			return shmem.Broadcast(p.TeamWorld(), b.Slice(w, 2*w), b.Slice(0, w), 0)
		}, nil
	case "fcollect":
		return func(p *shmem.PE, b shmem.Sym[int64]) error {
			return shmem.FCollect(p.TeamWorld(), b.Slice(w, w*(p.NPEs()+1)), b.Slice(0, w))
		}, nil
	case "reduce":
		return func(p *shmem.PE, b shmem.Sym[int64]) error {
			return shmem.Reduce(p.TeamWorld(), shmem.OpSum, b.Slice(w, 2*w), b.Slice(0, w))
		}, nil
	}
	return nil, fmt.Errorf("no prediction for bench %q", bench)
}

// predictOne returns the predicted µs of one call of run on n PEs, after
// a barrier, as shmem-perf times it (back to back calls, so the second of
// two is timed).
func predictOne(m sim.Model, n, size int, run func(*shmem.PE, shmem.Sym[int64]) error) (float64, error) {
	w := max(1, size/8)
	bufs := make([]shmem.Sym[int64], n)
	steps := []func(*shmem.PE) error{
		func(p *shmem.PE) error {
			var err error
			bufs[p.MyPE()], err = shmem.Calloc[int64](p, w*(n+1))
			return err
		},
		func(p *shmem.PE) error { return p.BarrierAll() },
		func(p *shmem.PE) error { return run(p, bufs[p.MyPE()]) },
		func(p *shmem.PE) error { return run(p, bufs[p.MyPE()]) },
	}
	rep, err := sim.MeasureSteps(n, steps, sim.WithModel(m), sim.WithHeapSize(8*w*(n+1)+2<<20), sim.WithNodes(n))
	if err != nil {
		return 0, err
	}
	return float64(rep.Steps[3].Nanoseconds()) / 1e3, nil
}
