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
// with the first failing PE's status, or a GlobalExit's. It names the PE
// that ended the job from what the PEs report (internal/pestatus): the
// one that called GlobalExit, not the first exit heard; a PE that failed
// after Finalize as such; the PE whose failure failed the others. Whatever
// way it ends, it removes the
// job's shared-memory segments from /dev/shm. Its PEs die with it, even
// when it is killed with SIGKILL (see internal/launch).
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/bootstrap"
	"github.com/goshmem/shmem/internal/affinity"
	"github.com/goshmem/shmem/internal/launch"
	"github.com/goshmem/shmem/transport/udma"
)

func main() {
	sigs := make(chan os.Signal, 4)
	// SIGQUIT asks every PE for its hang report (SHMEM_HANG_REPORT) and
	// stops nothing; SIGINT and SIGTERM stop the job.
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGQUIT)
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, sigs))
}

// run is shmemrun with its outputs and signals given; it returns the exit
// status: 2 for a bad command line, 1 when the job could not be set up,
// 127 when a PE could not be started, else the job's (launch.Result.Status).
func run(args []string, stdout, stderr io.Writer, sigs <-chan os.Signal) int {
	c, err := parseArgs(args, stderr)
	if errors.Is(err, errHelp) {
		return 0
	}
	if errors.Is(err, errUsagePrinted) {
		return 2
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
	// shmemrun's own lines and the PEs' stderr lines share stderr: one
	// lock keeps each whole.
	errw := &lockedWriter{w: stderr}
	logf := func(format string, args ...any) { fmt.Fprintf(errw, "shmemrun: "+format+"\n", args...) }
	if c.Verbose {
		logf("job %s, %d PEs, rendezvous %s, TLS %v", job, c.NP, uid.Addr, uid.TLS)
	}
	cpus := affinity.ForJob(c.BindTo, c.NP, os.Getenv)
	if c.Verbose && cpus != nil {
		logf("PEs bound to CPUs %v", cpus)
	}
	extra := settings(c)
	status := 0
	j, err := launch.Start(launch.Config{
		Program: c.Prog, Args: c.Args, NPEs: c.NP,
		Env: base, RankEnv: func(int) []string { return extra }, UniqueID: uid.String(),
		CPUs: cpus, Stdout: stdout, Stderr: errw, Prefix: launch.RankPrefix,
		KillOnFailure: true, Grace: c.Grace, Signals: sigs, Logf: logf, Verbose: c.Verbose,
	})
	if err != nil {
		logf("%v", err)
		status = 127
	} else {
		res := j.Wait()
		if sum := res.Summary(); sum != "" {
			logf("%s", sum)
		}
		status = res.Status()
	}
	n, err := udma.Reap(job)
	switch {
	case err != nil:
		logf("removing the job's segments: %v", err)
	case n > 0 && c.Verbose:
		logf("removed %d segments of job %s from %s", n, job, udma.Dir)
	}
	return status
}

// lockedWriter makes each Write to w whole with respect to the others.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}
