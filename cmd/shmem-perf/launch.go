package main

import (
	"fmt"
	"io"
	"os"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/internal/affinity"
	"github.com/goshmem/shmem/internal/launch"
)

// envChild marks a process that launch started, so it runs the benches
// instead of launching again.
const envChild = "SHMEM_PERF_CHILD"

// launchPEs is a minimal stand-in for shmemrun: it makes a unique ID on
// loopback and starts c.np copies of this binary as the world's PEs, with
// their output passed through unprefixed (PE 0's CSV rows stay parseable).
// It returns the first failure.
func launchPEs(c config, args []string, stdout, stderr io.Writer) error {
	if os.Getenv(envChild) != "" {
		return fmt.Errorf("-np inside a launched PE")
	}
	if os.Getenv("SHMEM_UID_SESSION_ID") == "" {
		// Loopback only: the benchmark never leaves the host.
		if err := os.Setenv("SHMEM_UID_SESSION_ID", "127.0.0.1:0"); err != nil {
			return err
		}
	}
	var opts []shmem.Option
	if c.noTLS {
		opts = append(opts, shmem.WithoutTLS())
	}
	uid, err := shmem.GetUniqueID(opts...)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	res, err := launch.Run(launch.Config{
		Program: self, Args: args, NPEs: c.np, UniqueID: uid.String(),
		RankEnv: func(int) []string { return []string{envChild + "=1"} },
		// Bound like shmemrun's and oshrun's PEs (one CPU each, unless
		// they park: affinity.Bind), so that the comparison with OSHMEM
		// is like for like.
		CPUs:   affinity.ForJob(c.bind, c.np, os.Getenv),
		Stdout: stdout, Stderr: stderr,
		// A failed PE leaves the others blocked in a collective.
		KillOnFailure: true,
	})
	if err != nil {
		return err
	}
	return res.Err()
}
