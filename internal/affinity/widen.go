package affinity

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// EnvAllowed names the CPUs a bound PE may widen to: the launcher sets it
// to the CPUs the job was planned on whenever it binds a PE (FormatList),
// and Init reads it (ParseList). Unset, a PE's threads stay where they are.
const EnvAllowed = "SHMEM_CPUS_ALLOWED"

// maxCPU bounds the CPU numbers ParseList accepts: unix.CPUSet's size.
const maxCPU = 1024

// Widen moves every thread of this process onto cpus: a PE bound to one
// CPU that finds it shared with a CPU-bound process (a busy poll's late
// yields) runs better unbound, wherever a slice is free. Go starts new
// threads from existing ones, which carry the wider mask on.
//
// Why not stay bound: measured beside two CPU-bound processes on the 2
// cores, Go API over TCP, put+quiet 8 B 390-490 µs bound against 120-210
// µs unbound (OSHMEM 110-140 µs); idle the binding is worth keeping (14 µs
// against 20-25).
func Widen(cpus []int) error {
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	if set.Count() == 0 {
		return fmt.Errorf("affinity: no CPU to widen to")
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	var first error
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		// A thread that ended meanwhile (ESRCH) has nothing to move.
		if err := unix.SchedSetaffinity(tid, &set); err != nil && err != unix.ESRCH && first == nil {
			first = fmt.Errorf("affinity: thread %d: %w", tid, err)
		}
	}
	return first
}

// FormatList writes cpus as a CPU list ("0,2,3"), the form ParseList reads.
func FormatList(cpus []int) string {
	s := make([]string, len(cpus))
	for i, c := range cpus {
		s[i] = strconv.Itoa(c)
	}
	return strings.Join(s, ",")
}

// ParseList reads a CPU list: numbers and ranges separated by commas
// ("0-3,8"), each CPU below 1024.
func ParseList(s string) ([]int, error) {
	var cpus []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		b := a
		if err == nil && isRange {
			b, err = strconv.Atoi(hi)
		}
		if err != nil || a < 0 || b < a || b >= maxCPU {
			return nil, fmt.Errorf("affinity: %q is not a CPU list (numbers and ranges below %d, separated by commas)", s, maxCPU)
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}
