package world_test

import (
	"fmt"
	"path/filepath"
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

// TestGiveUpAndLeave: one PE, alone with an operation timeout, gives up
// BarrierAll and then Finalize (the others are busy in their own code) and
// ends its process; only then do the others call BarrierAll and Finalize.
// On shared memory and over TCP, their BarrierAll fails at once with
// ErrPEFailed naming it (it used to hang on shared memory, or return nil);
// their Finalize completes when the PE that left was not the coordinator's
// (rank 0), and fails naming PE 0 when it was (it used to wait for the
// coordinator's answer for 10 minutes).
func TestGiveUpAndLeave(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worlds of processes")
	}
	for _, net := range []struct{ name, env string }{{"shm", ""}, {"tcp", "SHMEM_TRANSPORT=tcp"}} {
		for _, who := range []int{2, 0} {
			t.Run(fmt.Sprintf("%s/PE%d", net.name, who), func(t *testing.T) {
				mark := filepath.Join(t.TempDir(), "left")
				env := []string{lt.EnvWho + "=" + strconv.Itoa(who), lt.EnvMark + "=" + mark}
				if net.env != "" {
					env = append(env, net.env)
				}
				codes, outs := worldOfEnv(t, peBinary, 3, lt.RoleGiveUp, func(int) []string { return env })
				gaveUp := fmt.Sprintf("PE %d gave up operation", who)
				for r := 0; r < 3; r++ {
					m := resultLine.FindStringSubmatch(outs[r])
					if codes[r] != 0 || m == nil {
						t.Errorf("PE %d exited %d without a result; output:\n%s", r, codes[r], outs[r])
						continue
					}
					msg, _ := strconv.Unquote(m[3])
					body, fin := failcheck.Class(m[1]), failcheck.Class(m[2])
					switch {
					case r == who:
						if body != "Timeout" || fin != "Timeout" {
							t.Errorf("PE %d (gives up): BarrierAll %s, Finalize %s, want Timeout for both; output:\n%s", r, body, fin, outs[r])
						}
					case body != "PEFailed" || !strings.Contains(msg, gaveUp):
						t.Errorf("PE %d: BarrierAll %s (%s), want PEFailed saying %q", r, body, msg, gaveUp)
					case who != 0 && fin != "nil":
						t.Errorf("PE %d: Finalize %s, want nil; output:\n%s", r, fin, outs[r])
					case who == 0 && (fin != "PEFailed" || !strings.Contains(outs[r], "PE 0, whose coordinator runs the world's agreements, left")):
						t.Errorf("PE %d: Finalize %s, want PEFailed naming the coordinator's PE 0; output:\n%s", r, fin, outs[r])
					}
				}
			})
		}
	}
}
