package ctest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/internal/launch"
)

// TestACLStartup starts a world the CANN SHMEM way, without shmemrun: rank
// 0 makes the unique ID (aclshmemx_get_uniqueid) and prints it; the test
// hands it to the other ranks, and all initialize with
// aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, ...).
func TestACLStartup(t *testing.T) {
	setup(t)
	prog := compile(t, "acl")
	for _, tls := range []string{"default", "off"} {
		t.Run("tls-"+tls, func(t *testing.T) { aclWorld(t, prog, tls) })
	}
}

// aclWorld runs the acl program as a world of 3; tls "off" makes every
// rank call aclshmemx_set_conf_store_tls(false, ...) first. The ranks are
// started by the one launcher library, but as a user of the ACL API
// starts them: no rank or size in the environment (each program gets its
// own on the command line), rank 0 first, the others once it has printed
// the unique ID.
func aclWorld(t *testing.T, prog, tls string) {
	const npes = 3
	env := append(cleanEnv(), "SHMEM_UID_SESSION_ID=127.0.0.1:0", "ACL_TEST_TLS="+tls) // loopback only
	uid := make(chan string, 1)
	cfg := launch.Config{Program: prog, NPEs: npes, NoRank: true, Env: env, Capture: true, Timeout: 5 * time.Minute}
	first := cfg
	first.Ranks = []int{0}
	first.Command = func(_ int, name string, _ ...string) *exec.Cmd { return exec.Command(name, "0", fmt.Sprint(npes)) }
	first.OnLine = func(_ int, line string) {
		if tok, ok := strings.CutPrefix(line, "UID "); ok {
			select {
			case uid <- tok:
			default:
			}
		}
	}
	j0, err := launch.Start(first)
	if err != nil {
		t.Fatal(err)
	}
	defer j0.Kill()
	var token string
	select {
	case token = <-uid:
	case <-j0.Done():
		t.Fatalf("rank 0 ended without printing its unique ID (%v):\n%s", j0.PE(0).End(), j0.PE(0).Output())
	}
	rest := cfg
	rest.Ranks = []int{1, 2}
	rest.Command = func(rank int, name string, _ ...string) *exec.Cmd {
		return exec.Command(name, fmt.Sprint(rank), fmt.Sprint(npes), token)
	}
	j1, err := launch.Start(rest)
	if err != nil {
		t.Fatal(err)
	}
	res0, res := j0.Wait(), j1.Wait()
	if err := res0.Err(); err != nil {
		t.Errorf("rank 0: %v", err)
	}
	if err := res.Err(); err != nil {
		t.Errorf("ranks 1, 2: %v", err)
	}
	var all strings.Builder
	for _, p := range append(j0.Procs(), j1.Procs()...) {
		fmt.Fprintf(&all, "PE %d (%v):\n%s", p.Rank(), p.End(), p.Output())
	}
	out := all.String() // every PE's stdout and stderr
	if strings.Contains(out, "FAIL") || strings.Count(out, "acl ok") != npes {
		t.Fatalf("want %d PEs to say acl ok:\n%s", npes, out)
	}
	// goshmem warns on every PE whose connections are plain TCP: none by
	// default (TLS on, as for Go programs), every one when turned off.
	const off = "TLS is off"
	if got := strings.Count(out, off); (tls == "default" && got != 0) || (tls == "off" && got != npes) {
		t.Fatalf("TLS %s: %d PEs say %q:\n%s", tls, got, off, out)
	}
}

// TestKilledPEEndsBarrier kills one PE of a C program while the others are
// in shmem_barrier_all: they must end with goshmem's abort message naming
// the call and the failed PE (exit status 1), not hang. The world is
// started here (unique ID in the environment) rather than by shmemrun,
// which would stop the survivors itself.
func TestKilledPEEndsBarrier(t *testing.T) {
	setup(t)
	prog := compile(t, "killed")
	t.Run("barrier", func(t *testing.T) { killedWorld(t, prog, "barrier", "shmem_barrier_all") })
	// A C wait on shared memory polls its memory in C and asks goshmem
	// every millisecond whether a PE failed.
	t.Run("wait_until", func(t *testing.T) { killedWorld(t, prog, "wait", "shmem_long_wait_until") })
	// The active-set barrier runs in C between mapped PEs and in Go over
	// the network.
	t.Run("active_set", func(t *testing.T) { killedWorld(t, prog, "aset", "shmem_barrier") })
	t.Run("active_set_tcp", func(t *testing.T) { killedWorld(t, prog, "aset", "shmem_barrier", "SHMEM_TRANSPORT=tcp") })
	t.Run("wait_until_tcp", func(t *testing.T) { killedWorld(t, prog, "wait", "shmem_long_wait_until", "SHMEM_TRANSPORT=tcp") })
	// Under SHMEMX_ERRORS_RETURN the wait returns instead, in C's wait
	// (shared memory) and in Go's (TCP, no peer mapped).
	t.Run("wait_until_returns", func(t *testing.T) { killedWorld(t, prog, "return", "shmem_long_wait_until") })
	t.Run("wait_until_returns_tcp", func(t *testing.T) {
		killedWorld(t, prog, "return", "shmem_long_wait_until", "SHMEM_TRANSPORT=tcp")
	})
}

// TestKilledLockHolderNamed: the last of 3 PEs dies holding a static
// lock, whose word is on PE 0, while the others wait for it in
// shmem_set_lock over TCP. PE 0 ends on its error, and PE 1's next atomic
// on PE 0's word then fails; PE 1 must still name the holder, recorded
// failed first, not PE 0 (it named PE 0 in 3 runs of 5 under shmemrun
// before).
func TestKilledLockHolderNamed(t *testing.T) {
	setup(t)
	prog := compile(t, "killed")
	for i := 0; i < 5; i++ {
		for _, p := range startedJob(t, prog, "lock", 3, "SHMEM_TRANSPORT=tcp")[:2] {
			end, out := p.End(), p.Output()
			if end.Code != 1 || !strings.Contains(out, "goshmem: shmem_set_lock: ") || !strings.Contains(out, "PE 2 failed") ||
				strings.Contains(out, "-> PE 0)") || strings.Contains(out, "FAIL") {
				t.Fatalf("PE %d: %v, want exit status 1 and shmem_set_lock's message naming PE 2, not PE 0:\n%s", p.Rank(), end, out)
			}
		}
	}
}

// TestEarlyFinalizeEndsWaits: PE 1 of 2 calls shmem_finalize while PE 0
// waits on its own memory, polled in C on shared memory and in Go over
// TCP, or in the active-set barrier: PE 0's call must end with goshmem's
// message naming it (every other PE has called Finalize), not hang.
func TestEarlyFinalizeEndsWaits(t *testing.T) {
	setup(t)
	prog := compile(t, "early")
	tcp := []string{"SHMEM_TRANSPORT=tcp"}
	for _, c := range []struct {
		name, mode, call string
		env              []string
	}{
		{"wait_until", "wait", "shmem_long_wait_until", nil},
		{"wait_until_tcp", "wait", "shmem_long_wait_until", tcp},
		{"active_set", "aset", "shmem_barrier", nil},
		{"active_set_tcp", "aset", "shmem_barrier", tcp},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := startedJob(t, prog, c.mode, 2, c.env...)[0]
			if end, out := p.End(), p.Output(); end.Code != 1 || !strings.Contains(out, "goshmem: "+c.call+": ") ||
				!strings.Contains(out, "Finalize") || strings.Contains(out, "FAIL") {
				t.Errorf("PE 0: %v, want exit status 1 and the message naming %s and Finalize:\n%s", end, c.call, out)
			}
		})
	}
}

// TestEarlyFinalizeNamed: under shmemrun PE 1 of 4 calls shmem_finalize
// while the others wait in shmem_barrier_all, which fails each and, in
// the default error mode, ends it with status 1. shmemrun names PE 1 as
// the job's cause, not the survivor whose exit it heard first (it named
// one in every run before).
func TestEarlyFinalizeNamed(t *testing.T) {
	setup(t)
	prog := compile(t, "early")
	for i := 0; i < 2; i++ {
		out, err := exec.Command(tools.shmrun, "-np", "4", "--timeout", "60s", prog, "barrier_all").CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Fatalf("want exit status 1, got %v:\n%s", err, out)
		}
		if !strings.Contains(string(out), "shmemrun: job failed: PE 1 called Finalize while PE ") || strings.Contains(string(out), "FAIL") {
			t.Fatalf("shmemrun does not name PE 1:\n%s", out)
		}
	}
}

// startedJob runs prog mode on npes PEs started here (unique ID in the
// environment, each PE with env added) rather than by shmemrun, which
// would stop the others when one fails, and returns them once all ended.
func startedJob(t *testing.T, prog, mode string, npes int, env ...string) []*launch.Proc {
	t.Setenv("SHMEM_UID_SESSION_ID", "127.0.0.1:0")
	uid, err := shmem.GetUniqueID()
	if err != nil {
		t.Fatal(err)
	}
	j, err := launch.Start(launch.Config{Program: prog, Args: []string{mode}, NPEs: npes, Env: cleanEnv(),
		UniqueID: uid.String(), Capture: true, Timeout: 5 * time.Minute,
		RankEnv: func(int) []string { return append([]string{"SHMEM_INIT_TIMEOUT=60s"}, env...) }})
	if err != nil {
		t.Fatal(err)
	}
	if res := j.Wait(); res.TimedOut {
		t.Fatalf("the job ran out of time: %v", res.Err())
	}
	return j.Procs()
}

// killedWorld runs killed.c in mode on 3 PEs, each with env added.
func killedWorld(t *testing.T, prog, mode, call string, env ...string) {
	const npes = 3
	for _, p := range startedJob(t, prog, mode, npes, env...) {
		end, out := p.End(), p.Output()
		if p.Rank() == npes-1 {
			if end.Signal != syscall.SIGKILL {
				t.Errorf("PE %d: %v, want killed by SIGKILL:\n%s", p.Rank(), end, out)
			}
			continue
		}
		if end.Code != 1 || !strings.Contains(out, "goshmem: "+call+": ") || strings.Contains(out, "FAIL") {
			t.Errorf("PE %d: %v, want exit status 1 and the abort message naming %s:\n%s", p.Rank(), end, call, out)
		}
		t.Logf("PE %d: %s", p.Rank(), strings.TrimSpace(out))
	}
}

// cleanEnv is the test's environment without the variables of any
// launcher the test itself may run under.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "SHMEM_") || strings.HasPrefix(k, "OMPI_") || strings.HasPrefix(k, "PMI_") ||
			strings.HasPrefix(k, "SLURM_") || k == "RANK" || k == "WORLD_SIZE" || k == "MASTER_ADDR" || k == "MASTER_PORT" ||
			k == "LOCAL_RANK" || k == "LOCAL_WORLD_SIZE" {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// TestGlobalExit: shmem_global_exit(7) on one PE ends the job with status
// 7 under shmemrun, while the others are blocked in a barrier.
func TestGlobalExit(t *testing.T) {
	setup(t)
	prog := compile(t, "gexit")
	cmd := exec.Command(tools.shmrun, "-np", "3", "--timeout", "60s", prog)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 7 {
		t.Fatalf("want exit status 7, got %v:\n%s", err, out)
	}
	if !strings.Contains(string(out), "PE 2 exits") || strings.Contains(string(out), "FAIL") {
		t.Fatalf("output:\n%s", out)
	}
}

// TestClearLockByNonHolder: PE 1's shmem_clear_lock of the lock PE 0
// holds, a heap lock (the Go ClearLock's check) and a static one (slock.c),
// aborts the job naming the call, the caller and the holder, where it used
// to release PE 0's lock and return.
func TestClearLockByNonHolder(t *testing.T) {
	setup(t)
	prog := compile(t, "badclear")
	for _, kind := range []string{"heap", "static"} {
		t.Run(kind, func(t *testing.T) {
			cmd := exec.Command(tools.shmrun, "-np", "2", "--timeout", "60s", prog, kind)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 {
				t.Fatalf("want exit status 1, got %v:\n%s", err, out)
			}
			for _, f := range []string{"shmem_clear_lock", "PE 1 does not hold", "PE 0 holds it", "invalid argument"} {
				if !strings.Contains(string(out), f) {
					t.Errorf("output does not mention %q:\n%s", f, out)
				}
			}
			if strings.Contains(string(out), "FAIL") {
				t.Errorf("output:\n%s", out)
			}
		})
	}
}

// TestACLUniqueIDUnterminated: a unique ID whose token fills its 500-byte
// field without a NUL, right before an unmapped page, is refused with
// ACLSHMEM_INVALID_PARAM and an error saying so; reading it up to a NUL
// that is not there faulted (SIGSEGV).
func TestACLUniqueIDUnterminated(t *testing.T) {
	setup(t)
	cmd := exec.Command(compile(t, "uid_unterminated"))
	cmd.Env = cleanEnv()
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "uid refused: aclshmemx_init_attr: ") ||
		!strings.Contains(string(out), "not NUL-terminated") {
		t.Fatalf("%v, want the ID refused as unterminated:\n%s", err, out)
	}
}

// TestKilledPEEndsSpin kills one PE of a C program while the others spin
// on calls that return at once (shmem_long_g of a flag on it, in the heap
// or a static, shmem_long_atomic_fetch of it, shmem_long_test of their
// own flag), which on shared
// memory are loads from mapped memory that outlives the PE: each loop must
// end with goshmem's message naming the call and the failed PE.
func TestKilledPEEndsSpin(t *testing.T) {
	setup(t)
	prog := compile(t, "killed")
	for _, c := range []struct{ mode, call string }{
		{"g", "shmem_long_g"}, {"static", "shmem_long_g"}, {"fetch", "shmem_long_atomic_fetch"}, {"test", "shmem_long_test"},
	} {
		// "Get (PE 0 -> PE 2): ...: PE failed", "PE 2 failed while ...";
		// or, over TCP, when the other survivor's exit (status 1, on its
		// own error) reached this PE before PE 2's death did, settle's
		// blame: "Get (PE 0 -> PE 1): PE 1 failed (...); then the
		// connection to PE 2 ended: ...".
		named := regexp.MustCompile(`goshmem: ` + c.call + `: .*(-> PE 2\)|PE 2 failed|connection to PE 2 ended)`)
		for _, tr := range []string{"shm", "tcp"} {
			t.Run(c.mode+"_"+tr, func(t *testing.T) {
				var env []string
				if tr == "tcp" {
					env = append(env, "SHMEM_TRANSPORT=tcp")
				}
				for _, p := range startedJob(t, prog, c.mode, 3, env...) {
					end, out := p.End(), p.Output()
					if p.Rank() == 2 {
						if end.Signal != syscall.SIGKILL {
							t.Errorf("PE 2: %v, want killed by SIGKILL:\n%s", end, out)
						}
						continue
					}
					if end.Code != 1 || !named.MatchString(out) || strings.Contains(out, "FAIL") {
						t.Errorf("PE %d: %v, want exit status 1 and %s's message naming PE 2:\n%s", p.Rank(), end, c.call, out)
					}
					t.Logf("PE %d: %s", p.Rank(), named.FindString(out))
				}
			})
		}
	}
}
