package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/goshmem/shmem/transport/udma"
)

// bin holds the binaries TestMain builds: shmemrun itself and the test
// program of testdata/pe.
var bin struct{ dir, shmemrun, pe string }

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "shmemrun-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin.dir, bin.shmemrun, bin.pe = dir, filepath.Join(dir, "shmemrun"), filepath.Join(dir, "pe")
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	for _, b := range [][2]string{{bin.shmemrun, "."}, {bin.pe, "./testdata/pe"}} {
		if out, err := exec.Command(gobin, "build", "-o", b[0], b[1]).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "building %s: %v\n%s", b[1], err, out)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := 0
	if err := goleak.Find(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	if c := m.Run(); c != 0 {
		code = c
	}
	if err := goleak.Find(); err != nil {
		fmt.Fprintln(os.Stderr, "leaked goroutines:", err)
		code = 1
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// runInProcess runs shmemrun's run with the test program and returns its
// status, stdout and stderr.
func runInProcess(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	t.Setenv("SHMEM_UID_SESSION_ID", "") // run picks the loopback default
	var out, errb bytes.Buffer
	st := run(args, &out, &errb, nil)
	return st, out.String(), errb.String()
}

func TestAllSucceed(t *testing.T) {
	st, out, errs := runInProcess(t, "-np", "3", "-heap", "4m", bin.pe, "-mode", "ok")
	if st != 0 {
		t.Fatalf("status %d\nstdout:\n%s\nstderr:\n%s", st, out, errs)
	}
	for r := 0; r < 3; r++ {
		if !strings.Contains(out, fmt.Sprintf("[PE %d] hello %d of 3\n", r, r)) {
			t.Errorf("stdout lacks PE %d's hello:\n%s", r, out)
		}
		if !strings.Contains(errs, fmt.Sprintf("[PE %d] stderr line from %d\n", r, r)) {
			t.Errorf("stderr lacks PE %d's line:\n%s", r, errs)
		}
	}
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if !regexp.MustCompile(`^\[PE [0-2]\] `).MatchString(l) {
			t.Errorf("unprefixed stdout line %q", l)
		}
	}
}

// TestOneFails: PE 1 exits 5; the others ignore SIGTERM, so only the
// SIGKILL after the grace period ends them.
func TestOneFails(t *testing.T) {
	st, out, errs := runInProcess(t, "-np", "3", "-grace", "200ms", bin.pe, "-mode", "fail", "-who", "1")
	if st != 5 {
		t.Fatalf("status %d, want 5\nstdout:\n%s\nstderr:\n%s", st, out, errs)
	}
	if !strings.Contains(errs, "shmemrun: PE 1 exited with status 5; stopping the other PEs") {
		t.Errorf("no message naming PE 1:\n%s", errs)
	}
	assertGone(t, readyPIDs(out))
}

// TestBindTo: bound PEs run on disjoint CPUs; unbound ones on all of them.
func TestBindTo(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("binding needs two CPUs")
	}
	cpus := func(mode string) map[string]string {
		st, out, errs := runInProcess(t, "-np", "2", "--bind-to", mode, bin.pe, "-mode", "cpus")
		if st != 0 {
			t.Fatalf("--bind-to %s: status %d\n%s", mode, st, errs)
		}
		got := map[string]string{}
		for _, m := range regexp.MustCompile(`(?m)^\[PE (\d)\] cpus=(.+)$`).FindAllStringSubmatch(out, -1) {
			got[m[1]] = m[2]
		}
		if len(got) != 2 {
			t.Fatalf("--bind-to %s: want a CPU list from each PE:\n%s", mode, out)
		}
		return got
	}
	if b := cpus("core"); b["0"] == b["1"] {
		t.Errorf("bound PEs share CPUs %q", b["0"])
	}
	if u := cpus("none"); u["0"] != u["1"] {
		t.Errorf("unbound PEs run on different CPUs: %q and %q", u["0"], u["1"])
	}
}

func TestGlobalExit(t *testing.T) {
	st, out, errs := runInProcess(t, "-np", "3", bin.pe, "-mode", "exit", "-who", "2")
	if st != 9 {
		t.Fatalf("status %d, want 9\nstdout:\n%s\nstderr:\n%s", st, out, errs)
	}
}

func TestBadProgram(t *testing.T) {
	st, _, errs := runInProcess(t, "-np", "2", filepath.Join(bin.dir, "no-such-program"))
	if st != 127 || !strings.Contains(errs, "starting PE 0") {
		t.Fatalf("status %d, stderr %q", st, errs)
	}
	if st, _, _ := runInProcess(t, "-np", "0", bin.pe); st != 2 {
		t.Fatalf("bad command line: status %d, want 2", st)
	}
}

// TestInterrupt sends SIGINT to a real shmemrun once every PE is ready
// and has left a segment of the job in /dev/shm: shmemrun must forward it,
// wait for the PEs and remove the segments.
func TestInterrupt(t *testing.T) {
	cmd := exec.Command(bin.shmemrun, "-np", "3", bin.pe, "-mode", "hang")
	cmd.Env = append(os.Environ(), "SHMEM_UID_SESSION_ID=127.0.0.1:0")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	kill := time.AfterFunc(60*time.Second, func() { _ = cmd.Process.Kill() })
	defer kill.Stop()
	var pids []int
	job := ""
	sc := bufio.NewScanner(stdout)
	re := regexp.MustCompile(`^\[PE \d\] ready pid=(\d+) job=([0-9a-f]+)$`)
	for len(pids) < 3 && sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			pid, _ := strconv.Atoi(m[1])
			pids, job = append(pids, pid), m[2]
		}
	}
	if len(pids) < 3 {
		cmd.Wait()
		t.Fatalf("only %d PEs got ready; stderr:\n%s", len(pids), errb.String())
	}
	if segs, err := udma.List(job); err != nil || len(segs) != 3 {
		t.Fatalf("before SIGINT the job should hold 3 segments: %d, %v", len(segs), err)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() {
	}
	err = cmd.Wait()
	if got := cmd.ProcessState.ExitCode(); got != 130 {
		t.Errorf("status %d (%v), want 130; stderr:\n%s", got, err, errb.String())
	}
	assertGone(t, pids)
	if segs, err := udma.List(job); err != nil || len(segs) != 0 {
		t.Errorf("segments of job %s left in /dev/shm: %v, %v", job, segs, err)
	}
}

func readyPIDs(out string) []int {
	var pids []int
	for _, m := range regexp.MustCompile(`ready pid=(\d+)`).FindAllStringSubmatch(out, -1) {
		pid, _ := strconv.Atoi(m[1])
		pids = append(pids, pid)
	}
	return pids
}

// assertGone checks that shmemrun reaped every PE before returning: their
// pids no longer exist (a reused pid would be a newer process, which the
// start time in /proc would tell; the tests finish too fast for reuse).
func assertGone(t *testing.T, pids []int) {
	t.Helper()
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); err != syscall.ESRCH {
			t.Errorf("PE process %d still exists (kill 0: %v)", pid, err)
		}
	}
}
