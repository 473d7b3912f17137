package ctest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/goshmem/shmem"
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
// rank call aclshmemx_set_conf_store_tls(false, ...) first.
func aclWorld(t *testing.T, prog, tls string) {
	const npes = 3
	env := append(cleanEnv(), "SHMEM_UID_SESSION_ID=127.0.0.1:0", "ACL_TEST_TLS="+tls) // loopback only
	first := exec.Command(prog, "0", fmt.Sprint(npes))
	first.Env = env
	stdout, err := first.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errs bytes.Buffer
	first.Stderr = &errs
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	defer first.Process.Kill()
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() || !strings.HasPrefix(lines.Text(), "UID ") {
		t.Fatalf("rank 0 printed %q, stderr:\n%s", lines.Text(), errs.String())
	}
	token := strings.TrimPrefix(lines.Text(), "UID ")
	results := make(chan string, npes)
	for r := 1; r < npes; r++ {
		cmd := exec.Command(prog, fmt.Sprint(r), fmt.Sprint(npes), token)
		cmd.Env = env
		go func() {
			out, err := cmd.CombinedOutput()
			results <- fmt.Sprintf("%s(err %v)", out, err)
		}()
	}
	var rest strings.Builder
	for lines.Scan() {
		rest.WriteString(lines.Text() + "\n")
	}
	if err := first.Wait(); err != nil {
		t.Errorf("rank 0: %v\n%s%s", err, rest.String(), errs.String())
	}
	all := rest.String()
	for r := 1; r < npes; r++ {
		all += <-results
	}
	if strings.Contains(all, "FAIL") || strings.Count(all, "acl ok") != npes || strings.Count(all, "(err <nil>)") != npes-1 {
		t.Fatalf("want %d PEs to say acl ok:\n%s", npes, all)
	}
	// goshmem warns on every PE whose connections are plain TCP: none by
	// default (TLS on, as for Go programs), every one when turned off.
	all += errs.String()
	const off = "TLS is off"
	if got := strings.Count(all, off); (tls == "default" && got != 0) || (tls == "off" && got != npes) {
		t.Fatalf("TLS %s: %d PEs say %q:\n%s", tls, got, off, all)
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
	// A C wait polls its memory in C and asks goshmem every millisecond
	// whether a PE failed.
	t.Run("wait_until", func(t *testing.T) { killedWorld(t, prog, "wait", "shmem_long_wait_until") })
}

func killedWorld(t *testing.T, prog, mode, call string) {
	const npes = 3
	t.Setenv("SHMEM_UID_SESSION_ID", "127.0.0.1:0")
	uid, err := shmem.GetUniqueID()
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		rank int
		out  string
		err  error
	}
	results := make(chan result, npes)
	for r := 0; r < npes; r++ {
		cmd := exec.Command(prog, mode)
		cmd.Env = append(cleanEnv(), fmt.Sprintf("SHMEM_RANK=%d", r), fmt.Sprintf("SHMEM_NPES=%d", npes),
			"SHMEM_UNIQUE_ID="+uid.String(), "SHMEM_INIT_TIMEOUT=60s")
		go func(r int) {
			out, err := cmd.CombinedOutput()
			results <- result{r, string(out), err}
		}(r)
	}
	for i := 0; i < npes; i++ {
		res := <-results
		var ee *exec.ExitError
		if !errors.As(res.err, &ee) {
			t.Errorf("PE %d: %v\n%s", res.rank, res.err, res.out)
			continue
		}
		if res.rank == npes-1 {
			continue // killed
		}
		if ee.ExitCode() != 1 || !strings.Contains(res.out, "goshmem: "+call+": ") || strings.Contains(res.out, "FAIL") {
			t.Errorf("PE %d: exit %d, want 1 and the abort message naming %s:\n%s", res.rank, ee.ExitCode(), call, res.out)
		}
		t.Logf("PE %d: %s", res.rank, strings.TrimSpace(res.out))
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
