// Command latency is capi/testdata/c/latency.c written against the Go
// API: the same 8-byte measures (put+quiet, get, fetch-add, posted put,
// posted add, put-and-wait ping-pong), the same method (PE 0 times, PE 1
// is passive but for the ping-pong) and output ("name usec" lines), so a
// C run and a Go run of one build compare call for call. BENCHMARKS.md's
// "The C API over TCP" A/B was made with it:
//
//	go build -o /tmp/lat_go ./bench/latency
//	go run ./cmd/oshcc -O2 capi/testdata/c/latency.c -o /tmp/lat_c
//	go build -o /tmp/shmemrun ./cmd/shmemrun
//	/tmp/shmemrun --network -np 2 /tmp/lat_go 5000
//	/tmp/shmemrun --network -np 2 /tmp/lat_c 5000
//
// (build both at each commit to compare, and alternate the runs).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/goshmem/shmem"
)

func main() {
	iters := 100000
	if len(os.Args) > 1 {
		n, err := strconv.Atoi(os.Args[1])
		if err != nil || n < 10 {
			fmt.Fprintln(os.Stderr, "usage: latency [iterations, at least 10]")
			os.Exit(2)
		}
		iters = n
	}
	p, err := shmem.Init(context.Background())
	if err == nil {
		err = errors.Join(run(p, iters), p.Finalize())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "latency:", err)
		os.Exit(1)
	}
}

func run(p *shmem.PE, iters int) error {
	if p.NPEs() < 2 {
		return errors.New("needs 2 PEs")
	}
	buf, err := shmem.Malloc[int64](p, 8)
	if err != nil {
		return err
	}
	ctr, err := shmem.Calloc[int64](p, 1)
	if err != nil {
		return err
	}
	flag, err := shmem.Calloc[int64](p, 1)
	if err != nil {
		return err
	}
	if err := p.BarrierAll(); err != nil {
		return err
	}
	if p.MyPE() == 0 {
		src, v := []int64{42}, make([]int64, 1)
		for _, m := range []struct {
			name string
			op   func(i int) error
		}{
			{"put8+quiet", func(int) error {
				if err := shmem.Put(p, buf, src, 1); err != nil {
					return err
				}
				return p.Quiet()
			}},
			{"get8", func(int) error { return shmem.Get(p, v, buf, 1) }},
			{"fetch_add8", func(int) error { _, err := shmem.AtomicFetchAdd(p, ctr, 1, 1); return err }},
			{"p8", func(i int) error { return shmem.P(p, buf, int64(i), 1) }},
			{"atomic_add8", func(int) error { return shmem.AtomicAdd(p, ctr, 1, 1) }},
		} {
			us, err := timed(iters, m.op, p.Quiet) // posted ones complete inside the window
			if err != nil {
				return fmt.Errorf("%s: %w", m.name, err)
			}
			fmt.Printf("%s %.3f\n", m.name, us)
		}
	}
	if err := p.BarrierAll(); err != nil {
		return err
	}
	us, err := timed(iters/10, func(i int) error {
		want := int64(i + 1)
		if p.MyPE() == 0 {
			if err := shmem.P(p, flag, want, 1); err != nil {
				return err
			}
			return shmem.WaitUntil(p, flag, shmem.CmpEQ, want)
		}
		if p.MyPE() == 1 {
			if err := shmem.WaitUntil(p, flag, shmem.CmpEQ, want); err != nil {
				return err
			}
			return shmem.P(p, flag, want, 0)
		}
		return nil
	}, nil)
	if err != nil {
		return fmt.Errorf("pingpong8: %w", err)
	}
	if p.MyPE() == 0 {
		fmt.Printf("pingpong8 %.3f\n", us)
	}
	return p.BarrierAll()
}

// timed runs op for a tenth of n as warm-up, then n times and finish (if
// set), and returns the mean µs of the timed calls.
func timed(n int, op func(i int) error, finish func() error) (float64, error) {
	warm := n / 10
	var t0 time.Time
	for i := 0; i < warm+n; i++ {
		if i == warm {
			t0 = time.Now()
		}
		if err := op(i); err != nil {
			return 0, err
		}
	}
	if finish != nil {
		if err := finish(); err != nil {
			return 0, err
		}
	}
	return float64(time.Since(t0).Nanoseconds()) / 1e3 / float64(n), nil
}
