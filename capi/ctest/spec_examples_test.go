package ctest

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// TestSpecExamples runs, per API family, a C program that plays the
// OpenSHMEM 1.5 specification's C examples of that family (the same data,
// calls and expected values, written for this test; see the comment atop
// each testdata/c/spec_*.c) on 2 and 4 PEs, and on 4 PEs over TCP
// (--network). Every PE checks its results (a failed check prints FAIL
// and ends the job) and says "<name> ok"; the lines the spec's examples
// print are checked here too. The programs use statics as the spec's
// examples do: over TCP the network carries them.
func TestSpecExamples(t *testing.T) {
	setup(t)
	// Lines every run prints, whatever its size (n is the PE count).
	want := map[string]func(n int) []string{
		"spec_rma": func(n int) []string {
			l := []string{"[PE 1] dest[0] on PE 1 is 1", "[PE 0] dest[0] on PE 0 is 0", "[PE 1] dest on PE 1 is 1 3 5 7 9",
				"[PE 1] PE 1 dest: 1, 2, 3, 4", "[PE 0] x: { 1, 2, 3 }", "[PE 0] y: 90"}
			for pe := 0; pe < n; pe++ {
				l = append(l, fmt.Sprintf("[PE %d] Hello from %d of %d", pe, pe, n))
			}
			return l
		},
		"spec_amo": func(n int) []string {
			return []string{"[PE 0] 0: dst = 66", "[PE 1] 1: dst = 22", "[PE 1] 1: old = 22, dst = 22", "[PE 0] 0: old = -1, dst = 66",
				"[PE 0] 0: old = 22, dst = 22", "[PE 1] 1: old = -1, dst = 23", "[PE 1] 1: dst = 75", "[PE 0] 0: dst = 74",
				fmt.Sprintf("[PE 1] 1: dest = 1, swapped = %d", 2%n)}
		},
		"spec_coll": func(n int) []string {
			total := n * (n + 1) / 2
			nums := make([]string, total)
			for i := range nums {
				nums[i] = fmt.Sprint(i)
			}
			l := []string{"[PE 0] 0: x = 4", "[PE 1] 1: x = 10101", "[PE 0] Found 32 maximal random numbers across all PEs."}
			for pe := 0; pe < n; pe++ {
				l = append(l, fmt.Sprintf("[PE %d] %d: 0, 1, 2, 3", pe, pe), fmt.Sprintf("[PE %d] %d: %s", pe, pe, strings.Join(nums, ", ")))
			}
			return l
		},
		"spec_p2p": func(n int) []string {
			return []string{"[PE 0] 0: count is", "[PE 0] PE 0 observed first update from PE"}
		},
		"spec_team": func(n int) []string {
			l := []string{fmt.Sprintf("[PE 0] xdim = 2, ydim = %d, zdim = 1", n/2)}
			for pe := 0; pe < n; pe++ {
				l = append(l, fmt.Sprintf("[PE %d] (%d, %d, 0) is mype = %d", pe, pe%2, pe/2, pe))
			}
			return l
		},
	}
	for _, name := range []string{"spec_rma", "spec_amo", "spec_coll", "spec_p2p", "spec_team"} {
		t.Run(name, func(t *testing.T) {
			prog := compile(t, name, "-pthread", "-lm")
			for _, run := range []struct {
				np      int
				network bool
			}{{2, false}, {4, false}, {4, true}} {
				np, flags := run.np, []string{"-np", strconv.Itoa(run.np)}
				if run.network {
					flags = append(flags, "--network")
				}
				var args []string
				if run.network {
					args = []string{"tcp"} // spec_rma: shmem_ptr of a peer is NULL
				}
				out := shmemrunFlags(t, flags, prog, args...)
				if strings.Contains(out, "FAIL") || strings.Count(out, name+" ok") != np {
					t.Fatalf("%v: want %d lines %q\n%s", flags, np, name+" ok", out)
				}
				for _, line := range want[name](np) {
					if !strings.Contains(out, line) {
						t.Errorf("-np %d: no line %q\n%s", np, line, out)
					}
				}
				if name == "spec_amo" && strings.Count(out, " was first") != 1 {
					t.Errorf("-np %d: want one PE first in the compare-swap race\n%s", np, out)
				}
				if name == "spec_p2p" {
					// Under the lock every PE saw a different count: 0 .. n-1.
					for c := 0; c < np; c++ {
						if strings.Count(out, fmt.Sprintf(": count is %d\n", c)) != 1 {
							t.Errorf("-np %d: want one PE to see count %d\n%s", np, c, out)
						}
					}
				}
			}
		})
	}
}
