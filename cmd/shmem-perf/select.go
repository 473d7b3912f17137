package main

import (
	"fmt"
	"slices"
	"strings"
)

// benchNames lists the benches in the order osu.c runs them, then the
// references that are not OSU benches (tcp_rtt, tls_bw_ceiling).
func benchNames() []string {
	return []string{"put", "get", "put_nb", "get_nb", "put_mr",
		"atomic_fetch_add", "atomic_add", "atomic_compare_swap", "atomic_swap",
		"atomic_fetch", "atomic_set", "atomic_inc", "atomic_fetch_inc",
		"barrier", "broadcast", "fcollect", "reduce", "reduce_f64", "tcp_rtt", "tls_bw_ceiling"}
}

// groupPrefix maps a group name of -b to the prefix of the benches it holds.
func groupPrefix(g string) (string, bool) {
	switch g {
	case "atomics":
		return "atomic_", true
	case "all":
		return "", true
	}
	return "", false
}

// selectBenches expands a -b list into bench names in run order.
func selectBenches(list string) ([]string, error) {
	want := map[string]bool{}
	for _, tok := range strings.Split(list, ",") {
		tok = strings.TrimSpace(tok)
		if prefix, ok := groupPrefix(tok); ok {
			for _, b := range benchNames() {
				if strings.HasPrefix(b, prefix) {
					want[b] = true
				}
			}
			continue
		}
		if !slices.Contains(benchNames(), tok) {
			return nil, fmt.Errorf("unknown bench %q in -b (benches: %s; groups: atomics, all)", tok, strings.Join(benchNames(), ", "))
		}
		want[tok] = true
	}
	var out []string
	for _, b := range benchNames() {
		if want[b] {
			out = append(out, b)
		}
	}
	return out, nil
}
