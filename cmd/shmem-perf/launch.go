package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/internal/affinity"
)

// envChild marks a process that launch started, so it runs the benches
// instead of launching again.
const envChild = "SHMEM_PERF_CHILD"

// launch is a minimal stand-in for shmemrun: it makes a unique ID on
// loopback and starts c.np copies of this binary as the world's PEs, with
// their output passed through. It returns the first failure.
func launch(c config, args []string, stdout, stderr io.Writer) error {
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
	// Bound like shmemrun's and oshrun's PEs (one CPU each, unless they
	// park: affinity.Bind), so that the comparison with OSHMEM is like for
	// like.
	cpus := affinity.ForJob(c.bind, c.np, os.Getenv)
	cmds := make([]*exec.Cmd, c.np)
	for r := range cmds {
		cmd := exec.Command(self, args...)
		cmd.Env = append(os.Environ(), envChild+"=1", "SHMEM_RANK="+strconv.Itoa(r),
			"SHMEM_NPES="+strconv.Itoa(c.np), "SHMEM_UNIQUE_ID="+uid.String())
		cmd.Stdout, cmd.Stderr = stdout, stderr
		var mine []int
		if cpus != nil {
			mine = cpus[r]
		}
		if err := affinity.Start(cmd, mine); err != nil {
			for _, started := range cmds[:r] {
				_ = started.Process.Kill()
			}
			return err
		}
		cmds[r] = cmd
	}
	errc := make([]error, c.np)
	var wg sync.WaitGroup
	for r, cmd := range cmds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := cmd.Wait(); err != nil {
				errc[r] = fmt.Errorf("PE %d: %w", r, err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errc...)
}
