// Command barrierthreads shows where a 2-PE barrier loop's slow calls come
// from: it runs chunks of 1000 BarrierAll calls and prints, per chunk, the
// milliseconds it took, the calls slower than 3 µs, and how often the
// process's threads were preempted (involuntary context switches); then
// the threads that woke during the loop (voluntary switches), the busiest
// first, and those preempted. On the 2-core VMs the slow calls and the
// preemptions match one for one, the preempted thread is the one running
// the loop, and the thread that woke as often is the one the runtime
// started first after the main one, sysmon (bench/NOTES.md, "the 2-PE
// barrier"). The loop's goroutine is not locked to its thread: locked,
// every yield of its polls hands the P to another thread, which changes
// what is measured.
//
// BT_SYSMON_POLICY=batch or idle first moves that thread to SCHED_BATCH or
// SCHED_IDLE, which the kernel does not let preempt a running thread when
// it wakes: on the 2-core VMs the loop's thread was preempted as often
// anyway (bench/NOTES.md).
//
// Usage:
//
//	go build -o /tmp/bt ./bench/barrierthreads && go run ./cmd/shmemrun -np 2 /tmp/bt
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	shmem "github.com/goshmem/shmem"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "barrierthreads:", err)
		os.Exit(1)
	}
}

func run() error {
	p, err := shmem.Init(context.Background())
	if err != nil {
		return err
	}
	defer p.Finalize()
	for range 200 {
		if err := p.BarrierAll(); err != nil {
			return err
		}
	}
	if err := lowerSysmon(os.Getenv("BT_SYSMON_POLICY")); err != nil {
		return err
	}
	before := switches()
	var rows []string
	for range 12 {
		preempted := total(switches())
		slow := 0
		t0 := time.Now()
		for range 1000 {
			t := time.Now()
			if err := p.BarrierAll(); err != nil {
				return err
			}
			if time.Since(t) > 3*time.Microsecond {
				slow++
			}
		}
		d := time.Since(t0)
		preempted = total(switches()) - preempted
		rows = append(rows, fmt.Sprintf("%.2f ms (slow %d, preempted %d)", float64(d.Microseconds())/1000, slow, preempted))
	}
	after := switches()
	type delta struct{ tid, woke, preempted int }
	var ds []delta
	for tid, s := range after {
		d := delta{tid, s.voluntary - before[tid].voluntary, s.involuntary - before[tid].involuntary}
		if d.woke > 0 || d.preempted > 0 {
			ds = append(ds, d)
		}
	}
	slices.SortFunc(ds, func(a, b delta) int { return b.woke - a.woke })
	var w []string
	for _, d := range ds {
		w = append(w, fmt.Sprintf("thread %d woke %d, preempted %d", d.tid, d.woke, d.preempted))
	}
	fmt.Printf("PE %d (pid %d): %s\nPE %d: %s\n", p.MyPE(), os.Getpid(), strings.Join(rows, ", "), p.MyPE(), strings.Join(w, ", "))
	return nil
}

type counts struct{ voluntary, involuntary int }

// switches reads every thread's context switch counts from /proc.
func switches() map[int]counts {
	out := map[int]counts{}
	dirs, _ := filepath.Glob("/proc/self/task/*")
	for _, d := range dirs {
		tid, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(d, "status"))
		if err != nil {
			continue // the thread ended
		}
		var c counts
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "voluntary_ctxt_switches:"); ok {
				c.voluntary, _ = strconv.Atoi(strings.TrimSpace(v))
			} else if v, ok := strings.CutPrefix(l, "nonvoluntary_ctxt_switches:"); ok {
				c.involuntary, _ = strconv.Atoi(strings.TrimSpace(v))
			}
		}
		out[tid] = c
	}
	return out
}

// total is the involuntary switches of all threads.
func total(m map[int]counts) int {
	n := 0
	for _, c := range m {
		n += c.involuntary
	}
	return n
}

// lowerSysmon moves the process's second thread, the one the runtime
// starts first (sysmon), to policy "batch" or "idle"; "" leaves it.
func lowerSysmon(policy string) error {
	if policy == "" {
		return nil
	}
	p, ok := map[string]uint32{"batch": unix.SCHED_BATCH, "idle": unix.SCHED_IDLE}[policy]
	if !ok {
		return fmt.Errorf("BT_SYSMON_POLICY %q: want batch or idle", policy)
	}
	var tids []int
	for tid := range switches() {
		tids = append(tids, tid)
	}
	slices.Sort(tids)
	if len(tids) < 2 {
		return fmt.Errorf("no thread after the main one")
	}
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: p}
	if err := unix.SchedSetAttr(tids[1], &attr, 0); err != nil {
		return fmt.Errorf("thread %d to %s: %w", tids[1], policy, err)
	}
	return nil
}
