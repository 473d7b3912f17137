package world_test

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/goshmem/shmem/internal/failcheck"
	lt "github.com/goshmem/shmem/internal/launch/launchtest"
)

var resultLine = regexp.MustCompile(`RESULT body=(\S+) fin=(\S+) err=(".*")`)

// TestFailureMatrixProcesses runs the failure table (internal/failcheck)
// with one process per PE, on shared memory and over TCP, and checks
// what every PE got from the call and from its Finalize, and that every
// process ended (runPEs kills a process only after 90 s: a hang fails the
// test by its exit code). The simulator runs the same table in the root
// package.
func TestFailureMatrixProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a world of processes per scenario")
	}
	for _, net := range []struct{ name, env string }{{"shm", ""}, {"tcp", "SHMEM_TRANSPORT=tcp"}} {
		for _, sc := range failcheck.Scenarios() {
			if sc.SimOnly {
				continue
			}
			t.Run(net.name+"/"+sc.Name, func(t *testing.T) {
				var env []string
				if net.env != "" {
					env = append(env, net.env)
				}
				codes, outs := world(t, sc.NPEs, lt.RoleScenario+sc.Name, env...)
				for r := 0; r < sc.NPEs; r++ {
					checkPE(t, sc, r, codes[r], outs[r])
				}
				if t.Failed() {
					// One PE's log rarely says why: its peers' say what they did.
					for r, out := range outs {
						t.Logf("PE %d exited %d; output:\n%s", r, codes[r], out)
					}
				}
			})
		}
	}
}

// TestFailureMatrixGossip runs the failure table's deaths and early
// Finalizes in worlds formed by gossip (ranks from the launcher as hints),
// where a departure is also gossiped, over UDP, beside the control lane:
// a graceful one must not read as a failure, a death must, before
// Finalize and during it.
func TestFailureMatrixGossip(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a world of processes per scenario")
	}
	names := []string{"finalize-vs-barrier", "exit-without-finalize", "lock-holder-dies",
		"coordinator-dies", "coordinator-dies-in-finalize", "global-exit"}
	for _, sc := range failcheck.Scenarios() {
		if !slices.Contains(names, sc.Name) {
			continue
		}
		t.Run(sc.Name, func(t *testing.T) {
			codes, outs := gossipWorldOf(t, sc.NPEs, lt.RoleScenario+sc.Name, false)
			for r := 0; r < sc.NPEs; r++ {
				checkPE(t, sc, r, codes[r], outs[r])
			}
			if t.Failed() {
				for r, out := range outs {
					t.Logf("PE %d exited %d; output:\n%s", r, codes[r], out)
				}
			}
		})
	}
}

func checkPE(t *testing.T, sc failcheck.Scenario, r, code int, out string) {
	t.Helper()
	want := sc.Want(r)
	switch {
	case want == "-":
		if code == 0 || resultLine.MatchString(out) {
			t.Errorf("PE %d exited %d, want it dead without a result; output:\n%s", r, code, out)
		}
		return
	case strings.HasPrefix(string(want), "Exit:"):
		// Under a launcher the world's GlobalExit ends every process
		// with its status.
		if st, _ := strconv.Atoi(strings.TrimPrefix(string(want), "Exit:")); code != st {
			t.Errorf("PE %d exited %d, want %d (GlobalExit); output:\n%s", r, code, st, out)
		}
		// Every PE that leaves on the exit says bye: a link that ends
		// without one is a failure to its peer, which may report it
		// before the exit's notice arrives.
		if strings.Contains(out, "control lane: peer lost") {
			t.Errorf("PE %d took a departure on GlobalExit for a failure; output:\n%s", r, out)
		}
		return
	}
	m := resultLine.FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Errorf("PE %d exited %d without a result; output:\n%s", r, code, out)
		return
	}
	msg, _ := strconv.Unquote(m[3])
	if failcheck.Class(m[1]) != want {
		t.Errorf("PE %d got %s (%s), want %s", r, m[1], msg, want)
	}
	if failcheck.Class(m[2]) != sc.Fin(r) {
		t.Errorf("PE %d: Finalize returned %s, want %s; output:\n%s", r, m[2], sc.Fin(r), out)
	}
	if bad := failcheck.OneLine(msg); bad != "" {
		t.Errorf("PE %d: %q %s", r, msg, bad)
	}
	if sc.Say != nil && msg != "" {
		for _, f := range sc.Say(r) {
			if !strings.Contains(msg, f) {
				t.Errorf("PE %d: %q does not say %q", r, msg, f)
			}
		}
	}
}
