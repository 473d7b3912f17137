package main

import (
	"fmt"
	"strings"
)

// target is one performance goal: the ratio of a goshmem metric to a
// reference (OSHMEM's same bench, or another row of goshmem's run) over some
// sizes must stay on one side of a limit. Over several sizes the worst ratio
// counts.
type target struct {
	what      string  // as the issue states it
	goshmem   string  // goshmem transport
	oshmem    string  // reference transport
	bench     string  // bench name
	sizes     []int64 // message sizes the goal covers
	bandwidth bool    // compare bandwidth (higher is better) instead of latency
	limit     float64 // latency ratio <= limit, or bandwidth ratio >= limit
	refBench  string  // if set, the reference is goshmem's refBench row (same run and transport), not OSHMEM
	// modesDiffer marks a row shown for information, not a goal: goshmem
	// parks its reads (SHMEM_BUSY_POLL=0) and OSHMEM over UCX has no such
	// mode (its progress polls), so their ratio compares read modes, not
	// implementations. The parked rows' goals are the same-mode raw ones.
	modesDiffer bool
}

// targets lists the goals, in its order. The TCP goals are checked
// for goshmem's TCP path with TLS off (like OSHMEM, no encryption), with
// TLS on (the default), and with TLS off and reads that park at once
// instead of polling first (SHMEM_BUSY_POLL=0).
func targets() []target {
	mib := int64(1 << 20)
	t := []target{
		{"put+quiet 8 B, shared memory", "udma", "shm", "put", []int64{8}, false, 0.5, "", false},
		{"get 8 B, shared memory", "udma", "shm", "get", []int64{8}, false, 0.5, "", false},
		{"fetch-add, shared memory", "udma", "shm", "atomic_fetch_add", []int64{8}, false, 0.5, "", false},
		{"compare-swap, shared memory", "udma", "shm", "atomic_compare_swap", []int64{8}, false, 0.5, "", false},
		{"put bandwidth 1-4 MiB, shared memory", "udma", "shm", "put", []int64{mib, 2 * mib, 4 * mib}, true, 0.95, "", false},
		{"put bandwidth 64 KiB-4 MiB, shared memory (issue 17)", "udma", "shm", "put", []int64{64 << 10, 128 << 10, 256 << 10, 512 << 10, mib, 2 * mib, 4 * mib}, true, 1.0, "", false},
		{"the same, long windows (not the goal's OSU method; compare.sh's LONG_ITERS)", "udma-long", "shm-long", "put", []int64{64 << 10, 128 << 10, 256 << 10, 512 << 10, mib, 2 * mib, 4 * mib}, true, 1.0, "", false},
		{"barrier, 2 PEs, shared memory", "udma", "shm", "barrier", []int64{0}, false, 1.0, "", false},
	}
	for _, g := range []string{"tcp", "tcp-tls", "tcp-park"} {
		parked := g == "tcp-park"
		t = append(t,
			target{"put+quiet 8 B, TCP", g, "tcp", "put", []int64{8}, false, 1.0, "", parked},
			target{"get 8 B, TCP", g, "tcp", "get", []int64{8}, false, 1.0, "", parked},
			target{"fetch-add, TCP", g, "tcp", "atomic_fetch_add", []int64{8}, false, 1.0, "", parked},
			target{"put bandwidth 1 MiB, TCP", g, "tcp", "put", []int64{mib}, true, 3.0, "", parked},
			target{"put+quiet 8 B vs raw TCP round trip, same read mode", g, g, "put", []int64{8}, false, 1.3, "tcp_rtt_poll", false},
			target{"get 8 B vs raw TCP round trip, same read mode", g, g, "get", []int64{8}, false, 1.3, "tcp_rtt_poll", false})
	}
	return t
}

// verdict evaluates t on stats: the worst ratio, the values behind it, and
// whether the goal is met; ok is false when a value is missing.
func (t target) verdict(stats map[key]stat) (ratio, gv, ov float64, met, ok bool) {
	first := true
	for _, size := range t.sizes {
		g, gok := stats[key{implGoshmem, t.goshmem, t.bench, size}]
		ref := key{implOshmem, t.oshmem, t.bench, size}
		if t.refBench != "" {
			ref = key{implGoshmem, t.oshmem, t.refBench, size}
		}
		o, ook := stats[ref]
		if !gok || !ook {
			return 0, 0, 0, false, false
		}
		a, b := g.latencyUS, o.latencyUS
		if t.bandwidth {
			a, b = g.bandwidthMBps, o.bandwidthMBps
		}
		if b == 0 {
			return 0, 0, 0, false, false
		}
		r := a / b
		if first || (t.bandwidth && r < ratio) || (!t.bandwidth && r > ratio) {
			ratio, gv, ov, first = r, a, b, false
		}
	}
	if t.bandwidth {
		return ratio, gv, ov, ratio >= t.limit, true
	}
	return ratio, gv, ov, ratio <= t.limit, true
}

// writeTargets renders the goals as a table with each one's verdict.
func writeTargets(b *strings.Builder, stats map[key]stat) {
	b.WriteString("## Targets\n\n" +
		"Ratio = goshmem / reference (latency: lower is better; bandwidth: higher is better); the reference is " +
		"OSHMEM's same bench, or for the raw-TCP goals goshmem's `tcp_rtt_poll` row: a plain Go TCP round trip of 8 bytes " +
		"between the same two processes in the same run, whose reads poll the socket exactly as goshmem's lanes do " +
		"(the same code and SHMEM_BUSY_POLL; with SHMEM_BUSY_POLL=0, the `tcp-park` rows, they park at once). " +
		"The parked round trip (`tcp_rtt`) is listed below the table for comparison; it is not a goal's reference. " +
		"The `tcp-park` rows against OSHMEM are not goals (their goal in parentheses): OSHMEM over UCX polls and has no parked mode, " +
		"so they compare read modes, not implementations; the parked mode's goals are its same-mode raw rows. " +
		"The long-window row is not the goal's method (OSU's 100 timed puts a size, after a barrier): it times " +
		"compare.sh's LONG_ITERS puts a size in both implementations, to tell a slow stream from a slow start. " +
		"Over several sizes the worst size is shown.\n\n" +
		"| target | goshmem | reference | goshmem | reference | ratio | goal | met |\n" +
		"|---|---|---|---:|---:|---:|---:|---|\n")
	for _, t := range targets() {
		unit, goal := "µs", "≤ "+fmtNum(t.limit)
		if t.bandwidth {
			unit, goal = "MB/s", "≥ "+fmtNum(t.limit)
		}
		r, gv, ov, met, ok := t.verdict(stats)
		if !ok {
			fmt.Fprintf(b, "| %s | %s | %s | — | — | — | %s | not measured |\n", t.what, t.goshmem, t.oshmem, goal)
			continue
		}
		verdict := "**no**"
		switch {
		case t.modesDiffer:
			verdict, goal = "not a goal: modes differ", "("+goal+")"
		case met:
			verdict = "yes"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s %s | %s %s | %s | %s | %s |\n", t.what, t.goshmem, t.oshmem,
			fmtNum(gv), unit, fmtNum(ov), unit, fmtNum(r), goal, verdict)
	}
}
