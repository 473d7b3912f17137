package main

import (
	"fmt"
	"strings"
)

// writeRawRefs lists, per goshmem TCP transport, both raw TCP round trips
// of the run and goshmem's put+quiet and get 8 B against each. Only the
// same-mode one (tcp_rtt_poll) is a goal's reference: comparing goshmem's
// polling reads with a parked round trip measured the scheduler's wake-up,
// not goshmem (issue 17). The parked one stays for readers who want it.
func writeRawRefs(b *strings.Builder, stats map[key]stat) {
	var rows []string
	for _, g := range []string{"tcp", "tcp-tls", "tcp-park"} {
		park, pok := stats[key{implGoshmem, g, "tcp_rtt", 8}]
		poll, qok := stats[key{implGoshmem, g, "tcp_rtt_poll", 8}]
		if !pok && !qok {
			continue
		}
		put, uok := stats[key{implGoshmem, g, "put", 8}]
		get, gok := stats[key{implGoshmem, g, "get", 8}]
		rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s | %s | %s | %s |", g,
			cell(poll.latencyUS, qok), cell(park.latencyUS, pok),
			ratio(put.latencyUS, poll.latencyUS, uok && qok), ratio(get.latencyUS, poll.latencyUS, gok && qok),
			ratio(put.latencyUS, park.latencyUS, uok && pok), ratio(get.latencyUS, park.latencyUS, gok && pok)))
	}
	if len(rows) == 0 {
		return
	}
	b.WriteString("\nRaw TCP round trips of 8 bytes between the same two processes (µs), " +
		"polling like goshmem's lanes (`tcp_rtt_poll`, the goals' reference) and parked (`tcp_rtt`), " +
		"and goshmem's 8 B put+quiet and get against each:\n\n" +
		"| goshmem | raw, same mode | raw, parked | put / same | get / same | put / parked | get / parked |\n" +
		"|---|---:|---:|---:|---:|---:|---:|\n")
	b.WriteString(strings.Join(rows, "\n") + "\n")
}
