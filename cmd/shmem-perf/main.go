// Command shmem-perf runs the OSU OpenSHMEM micro-benchmark method on a
// goshmem backend, with the bench names, warm-ups, iteration counts and
// sizes of bench/oshmem/osu.c, so its CSV rows sit beside OSHMEM's in
// bench/report.
//
// Usage:
//
//	shmem-perf -pes 2 [-b all] [-m 4194304] [-csv]   simulator (transport "sim")
//	shmemrun -np 2 shmem-perf [-b ...] [-csv]        one PE per process: "udma",
//	                                                 or "tcp"/"tcp-tls" with
//	                                                 SHMEM_TRANSPORT=tcp
//	shmem-perf -np 2 [-notls] [-b ...] [-csv]        launches its own 2 processes
//	                                                 on loopback (until shmemrun)
//
// Flags:
//
//	-b     comma list of benches or groups ("atomics", "all"; default all)
//	-m     largest message in bytes (default 4 MiB, as osu.c)
//	-min   smallest message of put and get in bytes (default 1, as osu.c)
//	-iters N  timed iterations of the point-to-point benches, atomics and
//	       references instead of OSU's counts (warm-ups unchanged): two runs
//	       with different N give instruction or syscall counts per operation
//	-t     transport label for the CSV, overriding the detected one
//	-cpuprofile FILE  write each PE's CPU profile to FILE.<rank>
//	-bind auto|core|none  with -np: bind PE r to the r-th equal share of the
//	       allowed CPUs, as oshrun binds its PEs (auto, the default: unless
//	       SHMEM_BUSY_POLL=0)
//	-rawhost ADDR     where PE 0 reaches PE 1 for the references on a plain Go
//	       TCP connection (default 127.0.0.1): tcp_rtt, a round trip of 8
//	       bytes with parked reads (tcp_rtt) and with reads that poll as
//	       goshmem's lanes do (tcp_rtt_poll); tls_bw_ceiling, 1 MiB sealed
//	       with AES-128-GCM by PE 0 and opened by PE 1 in goshmem's record
//	       size, no goshmem code on the data path (tlsceiling.go)
//	-csv   print CSV rows (PE 0 only) on stdout with the header
//	       impl,transport,bench,size_bytes,iterations,latency_us,bandwidth_MBps
//	-metrics  run with shmem.WithMetrics and print every PE's metrics after
//	       the benches to stderr, in Prometheus' text format: the series
//	       package metrics' Collector serves (README.md, "Metrics")
//
// A readable table with allocations per operation goes to stderr. Only the
// timed loop is between the time.Now calls; it allocates nothing of its own
// (buffers and Sym slices are made before it).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/internal/affinity"
	"github.com/goshmem/shmem/sim"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return // usage was printed: asked for, not a failure
		}
		fmt.Fprintln(os.Stderr, "shmem-perf:", err)
		os.Exit(1)
	}
}

// config is what the flags say.
type config struct {
	sel     []string // bench names, groups expanded
	max     int      // largest message in bytes
	min     int      // smallest message of put and get, in bytes
	iters   int      // > 0: timed iterations of p2p, atomics and references
	label   string   // transport column; "" means detect
	csv     bool
	pes     int    // > 0: run in the simulator with this many PEs
	np      int    // > 0: launch this many processes of this binary
	noTLS   bool   // with -np: a unique ID without TLS
	profile string // CPU profile file; each PE adds ".<rank>"
	rawHost string // the address tcp_rtt dials to reach PE 1
	bind    string // -np's processes: "auto", "core" (one CPU each) or "none"
	metrics bool   // run with metrics and print them (metrics.go)
}

func parse(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("shmem-perf", flag.ContinueOnError)
	fs.SetOutput(stderr)
	b := fs.String("b", "all", "comma list of benches or groups (atomics, all)")
	fs.IntVar(&c.max, "m", 4<<20, "largest message in bytes")
	fs.IntVar(&c.min, "min", 1, "smallest message of put and get in bytes (a power of two; for instruction counts of one size)")
	fs.IntVar(&c.iters, "iters", 0, "timed iterations of point-to-point benches, atomics and references (default: OSU's counts)")
	fs.StringVar(&c.label, "t", "", "transport label for the CSV (default: detected)")
	fs.BoolVar(&c.csv, "csv", false, "print CSV rows on stdout (PE 0)")
	fs.IntVar(&c.pes, "pes", 0, "run N PEs in the simulator (label sim)")
	fs.IntVar(&c.np, "np", 0, "launch N processes of this binary on loopback")
	fs.BoolVar(&c.noTLS, "notls", false, "with -np: make the unique ID without TLS")
	fs.BoolVar(&c.noTLS, "no-tls", false, "the same as -notls (shmemrun's spelling)")
	fs.StringVar(&c.rawHost, "rawhost", "127.0.0.1", "the address of PE 1's host, for the tcp_rtt and tls_bw_ceiling references")
	fs.StringVar(&c.bind, "bind", "auto", "with -np: core binds PE r to the r-th equal share of the allowed CPUs (as oshrun does), none leaves them unbound, auto binds unless SHMEM_BUSY_POLL=0")
	fs.StringVar(&c.bind, "bind-to", "auto", "the same as -bind (shmemrun's spelling)")
	fs.StringVar(&c.profile, "cpuprofile", "", "write each PE's CPU profile to FILE.<rank>")
	fs.BoolVar(&c.metrics, "metrics", false, "run with metrics on and print them to stderr (Prometheus text) after the benches")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() != 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if c.max < 8 || c.max > 1<<30 {
		return c, fmt.Errorf("-m %d: want 8 .. 1 GiB", c.max)
	}
	if c.iters < 0 {
		return c, fmt.Errorf("-iters %d: want 1 or more (0: OSU's counts)", c.iters)
	}
	if c.min < 1 || c.min > c.max || c.min&(c.min-1) != 0 {
		return c, fmt.Errorf("-min %d: want a power of two in 1 .. -m", c.min)
	}
	if c.pes != 0 && c.np != 0 {
		return c, fmt.Errorf("-pes and -np are exclusive")
	}
	// The benches pair PE i with PE i+n/2: checked here, before -np
	// starts any process.
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for _, f := range []struct {
		name string
		n    int
	}{{"np", c.np}, {"pes", c.pes}} {
		if f.n < 0 || f.n%2 != 0 || (given[f.name] && f.n == 0) {
			return c, fmt.Errorf("-%s %d: want an even number of PEs, 2 or more", f.name, f.n)
		}
	}
	if _, err := affinity.Bind(c.bind, func(string) string { return "" }); err != nil {
		return c, fmt.Errorf("-bind: %v", err)
	}
	sel, err := selectBenches(*b)
	if err != nil {
		return c, err
	}
	c.sel = sel
	return c, nil
}

func run(args []string, stdout, stderr io.Writer) error {
	c, err := parse(args, stderr)
	if err != nil {
		return err
	}
	if c.np > 0 && os.Getenv(envChild) == "" {
		return launchPEs(c, args, stdout, stderr)
	}
	heap := shmem.WithHeapSize(heapFor(c.max, max(c.pes, 2)))
	if c.pes > 0 {
		if c.label == "" {
			c.label = "sim"
		}
		pes := make([]*shmem.PE, c.pes)
		err := sim.Run(c.pes, func(p *shmem.PE) error {
			pes[p.MyPE()] = p
			return benchAll(p, c, stdout, stderr)
		}, simMetrics(c, sim.WithHeapSize(int(heapFor(c.max, c.pes))))...)
		if err != nil || !c.metrics {
			return err
		}
		return printMetrics(stderr, pes...)
	}
	opts := withMetrics(c, nil)
	if os.Getenv("SHMEM_SYMMETRIC_SIZE") == "" {
		opts = append(opts, heap)
	}
	tlsOn := true
	if s := os.Getenv("SHMEM_UNIQUE_ID"); s != "" {
		uid, err := shmem.ParseUniqueID(s)
		if err != nil {
			return err
		}
		tlsOn = uid.TLS
		if !tlsOn {
			opts = append(opts, shmem.WithoutTLS())
		}
	}
	if c.label == "" {
		c.label = "udma"
		if strings.EqualFold(strings.TrimSpace(os.Getenv("SHMEM_TRANSPORT")), "tcp") {
			c.label = "tcp"
			if tlsOn {
				c.label = "tcp-tls"
			}
		}
	}
	p, err := shmem.Init(context.Background(), opts...)
	if err != nil {
		return err
	}
	if err := benchAll(p, c, stdout, stderr); err != nil {
		return err
	}
	if c.metrics {
		if err := printMetrics(stderr, p); err != nil {
			return err
		}
	}
	return p.Finalize()
}

// heapFor sizes the symmetric heap for the largest allocation a bench makes
// (two buffers of max*npes bytes, see osu.c) plus room for the small ones
// and the team pool.
func heapFor(max, npes int) int64 {
	return int64(2*max*npes) + 32<<20
}
