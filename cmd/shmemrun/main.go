// Command shmemrun starts the PEs of one goshmem job on this host, like
// oshrun or torchrun:
//
//	shmemrun -np 4 ./myprog -flag value
//	shmemrun -np 4 go run ./examples/allgather
//
// It makes the job's unique ID (on 127.0.0.1 with a free port unless
// SHMEM_UID_SESSION_ID or SHMEM_UID_SOCK_IFNAME says otherwise), gives each
// PE SHMEM_RANK, SHMEM_NPES, SHMEM_LOCAL_RANK, SHMEM_LOCAL_SIZE and
// SHMEM_UNIQUE_ID, prefixes every line the PEs print with "[PE r] ",
// forwards SIGINT and SIGTERM, stops the other PEs when one fails and exits
// with the first failing PE's status. Whatever way it ends, it removes the
// job's shared-memory segments from /dev/shm.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/bootstrap"
	"github.com/goshmem/shmem/internal/affinity"
	"github.com/goshmem/shmem/transport/udma"
)

func main() {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, sigs))
}

// run is shmemrun with its outputs and signals given; it returns the exit
// status: 2 for a bad command line, 1 when the job could not be set up,
// 127 when a PE could not be started, else the first failing PE's status.
func run(args []string, stdout, stderr io.Writer, sigs <-chan os.Signal) int {
	c, err := parseArgs(args, stderr)
	if errors.Is(err, errHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "shmemrun: %v\n", err)
		return 2
	}
	base := os.Environ()
	if needsSessionDefault(os.Getenv) {
		// GetUniqueID reads the process environment; the PEs keep base.
		os.Setenv(bootstrap.EnvUIDSessionID, sessionDefault)
	}
	var opts []shmem.Option
	if c.NoTLS {
		opts = append(opts, shmem.WithoutTLS())
	}
	uid, err := shmem.GetUniqueID(opts...)
	if err != nil {
		fmt.Fprintf(stderr, "shmemrun: making the unique ID: %v\n", err)
		return 1
	}
	job := uid.JobName()
	if c.Verbose {
		fmt.Fprintf(stderr, "shmemrun: job %s, %d PEs, rendezvous %s, TLS %v\n", job, c.NP, uid.Addr, uid.TLS)
	}
	errSink := &sink{w: stderr}
	s := &supervisor{
		c:      c,
		env:    func(rank int) []string { return childEnv(base, c, uid.String(), rank) },
		stdout: &sink{w: stdout},
		stderr: errSink,
		log:    errSink,
		sigs:   sigs,
	}
	s.cpus = affinity.ForJob(c.BindTo, c.NP, os.Getenv)
	if c.Verbose && s.cpus != nil {
		fmt.Fprintf(stderr, "shmemrun: PEs bound to CPUs %v\n", s.cpus)
	}
	status := s.run()
	n, err := udma.Reap(job)
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "shmemrun: removing the job's segments: %v\n", err)
	case n > 0 && c.Verbose:
		fmt.Fprintf(stderr, "shmemrun: removed %d segments of job %s from %s\n", n, job, udma.Dir)
	}
	return status
}
