// Package affinity binds the processes a launcher starts to CPUs: each PE
// gets its own equal share of the CPUs the launcher may use (one CPU each
// when there are as many PEs as CPUs, as mpirun's default --bind-to core
// gives small jobs), so a Go PE keeps the parallelism of its share.
//
// Why: a PE that polls its sockets (SHMEM_BUSY_POLL) wants a core of its
// own, and a PE that waits spins before it sleeps. Left to float, two such
// PEs often share one CPU while another idles: on 2 cores, two PEs over TCP
// measured put+quiet 20-25 µs floating and 14-15 µs bound (OSHMEM's oshrun,
// which binds, 20-34 µs in the same runs).
package affinity

import (
	"fmt"
	"os/exec"
	"time"

	"golang.org/x/sys/unix"
)

// Bind reports whether a launcher should bind its PEs for mode: "core"
// binds, "none" does not, and "auto" binds unless the PEs park their reads
// (SHMEM_BUSY_POLL=0 in getenv): a parked PE is woken by an interrupt, and
// bound to a CPU that has gone idle it wakes slowly, while unbound it runs
// on whichever CPU woke it (measured on 2 vCPUs, TCP get 8 B parked: 80 µs
// bound, 45 µs unbound).
func Bind(mode string, getenv func(string) string) (bool, error) {
	switch mode {
	case "core":
		return true, nil
	case "none":
		return false, nil
	case "auto":
		d, err := time.ParseDuration(getenv("SHMEM_BUSY_POLL"))
		return !(err == nil && d == 0), nil
	}
	return false, fmt.Errorf("binding %q: want auto, core or none", mode)
}

// Allowed returns the CPUs this process may run on, in increasing order.
func Allowed() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, err
	}
	var cpus []int
	for c := 0; c < len(set)*64; c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

// Plan returns the CPUs of each of np ranks: rank r gets the r-th block of
// len(cpus)/np CPUs (the remainder stays unused, so shares are equal).
// With more ranks than CPUs it returns nil: stacking PEs on CPUs would only
// take from the scheduler the freedom to spread them when some wait.
func Plan(np int, cpus []int) [][]int {
	if np < 1 || np > len(cpus) {
		return nil
	}
	k := len(cpus) / np
	plan := make([][]int, np)
	for r := range plan {
		plan[r] = cpus[r*k : (r+1)*k : (r+1)*k]
	}
	return plan
}

// ForJob returns the CPUs of each of np PEs a launcher starts with mode
// (see Bind), or nil when they stay unbound.
func ForJob(mode string, np int, getenv func(string) string) [][]int {
	if bind, _ := Bind(mode, getenv); !bind {
		return nil
	}
	cpus, err := Allowed()
	if err != nil {
		return nil
	}
	return Plan(np, cpus)
}

// StartLocked starts cmd bound to cpus, or unbound when cpus is empty.
// The caller must have locked its goroutine to its OS thread
// (runtime.LockOSThread): the child inherits the CPU mask of the thread
// that forks it, so StartLocked narrows this thread's mask for the fork
// and restores it after. A launcher forks from one locked thread anyway
// (its children's parent-death signal is tied to that thread), which is
// why the mask is restored rather than the thread thrown away.
//
// A non-nil restored error means the thread kept the narrow mask: the
// caller must not unlock it (ending the goroutine locked discards the
// thread), and only once the children it started have ended.
func StartLocked(cmd *exec.Cmd, cpus []int) (startErr, restoreErr error) {
	if len(cpus) == 0 {
		return cmd.Start(), nil
	}
	var old, set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return err, nil
	}
	for _, c := range cpus {
		set.Set(c)
	}
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return err, nil
	}
	startErr = cmd.Start()
	return startErr, unix.SchedSetaffinity(0, &old)
}
