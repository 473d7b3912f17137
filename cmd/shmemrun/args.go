package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/goshmem/shmem/bootstrap"
	"github.com/goshmem/shmem/internal/affinity"
)

// config is what the command line asks for.
type config struct {
	// NP is the number of PEs to start; required, 1..bootstrap.MaxNPEs.
	NP int
	// NoTLS makes the unique ID with shmem.WithoutTLS. Default off: the job
	// uses TLS 1.3 with credentials derived from its secret.
	NoTLS bool
	// Timeout is the start-up bound handed to the PEs as
	// SHMEM_INIT_TIMEOUT; 0 (default) leaves Init's own default (60 s).
	Timeout time.Duration
	// Heap is SHMEM_SYMMETRIC_SIZE for every PE; empty (default) keeps the
	// caller's environment or Init's default.
	Heap string
	// Network sets SHMEM_TRANSPORT=tcp so even same-host peers use TCP;
	// default off (shared memory between the PEs of this host).
	Network bool
	// Grace is how long PEs get after SIGTERM before SIGKILL. Default 5 s:
	// long enough for Finalize-less exits to flush logs.
	Grace time.Duration
	// Verbose prints the job name, the rendezvous address and each PE's
	// pid and end to stderr.
	Verbose bool
	// BindTo is "core" (PE r runs only on the r-th equal share of the CPUs
	// this process may use, when there are at least as many CPUs as PEs;
	// one CPU each with as many PEs as CPUs, as mpirun binds),
	// "none" (the scheduler places the PEs) or "auto" (default: core,
	// unless SHMEM_BUSY_POLL=0 makes the PEs park; see affinity.Bind).
	BindTo string
	// Prog and Args are the program every PE runs.
	Prog string
	Args []string
}

// errHelp is returned for -h/--help: usage was printed, exit 0.
var errHelp = errors.New("help requested")

// errUsagePrinted is returned for a flag the flag package refused: it
// printed the error and the usage already, so the caller only exits 2.
var errUsagePrinted = errors.New("bad flags")

// parseArgs reads "shmemrun -np N [flags] [--] prog args...". Flags end at
// the first non-flag word or at "--", so the program's own flags pass
// through untouched.
func parseArgs(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("shmemrun", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&c.NP, "np", 0, "number of PEs to start (required)")
	fs.IntVar(&c.NP, "n", 0, "the same as -np (as oshrun and mpirun accept it)")
	fs.BoolVar(&c.NoTLS, "no-tls", false, "make the unique ID without TLS (the ID carries the choice to every PE's Init: the program need not pass shmem.WithoutTLS)")
	fs.DurationVar(&c.Timeout, "timeout", 0, "start-up bound for Init, passed as SHMEM_INIT_TIMEOUT (0: Init's default)")
	fs.StringVar(&c.Heap, "heap", "", "symmetric heap per PE, e.g. 512m or 2G (sets SHMEM_SYMMETRIC_SIZE)")
	fs.BoolVar(&c.Network, "network", false, "use TCP between all PEs, even on this host (sets SHMEM_TRANSPORT=tcp)")
	fs.DurationVar(&c.Grace, "grace", 5*time.Second, "time between SIGTERM and SIGKILL when stopping PEs")
	fs.BoolVar(&c.Verbose, "v", false, "print the job, the rendezvous address and each PE's pid and end")
	fs.StringVar(&c.BindTo, "bind-to", "auto", "core: PE r on the r-th equal share of the allowed CPUs when there are enough; none: unbound; auto: core unless SHMEM_BUSY_POLL=0")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: shmemrun -np N [flags] [--] program [args...]")
		fs.PrintDefaults()
	}
	if len(args) == 0 {
		fs.Usage() // nothing asked: show how to ask
		return c, errors.New("no arguments")
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return c, errHelp
		}
		// The flag package has printed the error and the usage.
		return c, errUsagePrinted
	}
	rest := fs.Args()
	switch {
	case c.NP < 1 || c.NP > bootstrap.MaxNPEs:
		return c, fmt.Errorf("-np %d: need 1..%d PEs", c.NP, bootstrap.MaxNPEs)
	case len(rest) == 0:
		return c, errors.New("no program to run")
	case c.Timeout < 0:
		return c, fmt.Errorf("-timeout %v is negative", c.Timeout)
	case c.Grace < 0:
		return c, fmt.Errorf("-grace %v is negative", c.Grace)
	}
	if _, err := affinity.Bind(c.BindTo, func(string) string { return "" }); err != nil {
		return c, fmt.Errorf("-bind-to: %v", err)
	}
	if c.Heap != "" {
		if _, err := bootstrap.ParseSize(c.Heap); err != nil {
			return c, fmt.Errorf("-heap: %v", err)
		}
	}
	c.Prog, c.Args = rest[0], rest[1:]
	return c, nil
}
