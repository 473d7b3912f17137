package main

import (
	"fmt"
	"strings"
)

// writeCeiling sets goshmem's 1 MiB put bandwidth under TLS beside both
// its goal's reference (OSHMEM over TCP, which encrypts nothing) and
// tls_bw_ceiling: the same 1 MiB sealed and opened with AES-128-GCM in
// goshmem's record size over a plain connection between the same two
// processes, with no goshmem code on the data path. The ceiling over
// OSHMEM says whether the goal fits what the two cores can seal, copy and
// open at all; the put over the ceiling is what goshmem's own code costs.
func writeCeiling(b *strings.Builder, stats map[key]stat) {
	const mib = 1 << 20
	var rows []string
	for _, g := range []string{"tcp-tls"} {
		c, cok := stats[key{implGoshmem, g, "tls_bw_ceiling", mib}]
		if !cok {
			continue
		}
		put, pok := stats[key{implGoshmem, g, "put", mib}]
		osh, ook := stats[key{implOshmem, "tcp", "put", mib}]
		rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s | %s | %s | %s |", g,
			cell(put.bandwidthMBps, pok), cell(osh.bandwidthMBps, ook), cell(c.bandwidthMBps, cok),
			ratio(put.bandwidthMBps, osh.bandwidthMBps, pok && ook),
			ratio(put.bandwidthMBps, c.bandwidthMBps, pok && cok),
			ratio(c.bandwidthMBps, osh.bandwidthMBps, cok && ook)))
	}
	if len(rows) == 0 {
		return
	}
	b.WriteString("\nTLS put bandwidth at 1 MiB (MB/s) against OSHMEM over TCP (the goal's reference, unencrypted) " +
		"and against `tls_bw_ceiling`: 1 MiB sealed with AES-128-GCM by PE 0 and opened by PE 1, in goshmem's " +
		"record and write sizes, over a plain Go TCP connection between the same two processes, reads polling as " +
		"goshmem's lanes do, no goshmem code on the data path and no copy out of the opened records " +
		"(goshmem must copy into the heap). A ceiling / OSHMEM below 3 (the goal) means the goal is beyond what the two " +
		"cores can seal, copy and open:\n\n" +
		"| goshmem | put | OSHMEM TCP put | ceiling | put / OSHMEM | put / ceiling | ceiling / OSHMEM |\n" +
		"|---|---:|---:|---:|---:|---:|---:|\n")
	b.WriteString(strings.Join(rows, "\n") + "\n")
}
