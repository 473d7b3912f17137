package launch

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/internal/pestatus"
)

// sh is a job of n PEs that each run script in /bin/sh.
func sh(n int, script string) Config {
	return Config{Program: "/bin/sh", Args: []string{"-c", script}, NPEs: n, Timeout: time.Minute}
}

func TestExitStatuses(t *testing.T) {
	res, err := Run(sh(3, `exit $SHMEM_RANK`))
	if err != nil {
		t.Fatal(err)
	}
	for r, e := range res.Ends {
		if e.Rank != r || e.Code != r || e.Signal != 0 || e.Pid <= 0 {
			t.Errorf("PE %d: end %+v", r, e)
		}
	}
	if res.First == nil || res.First.Rank == 0 || res.Status() != res.First.Code {
		t.Fatalf("first failure %+v, status %d", res.First, res.Status())
	}
	if err := res.Err(); !errors.Is(err, errs.ErrPEFailed) || !strings.Contains(err.Error(), "PE "+strconv.Itoa(res.First.Rank)) {
		t.Fatalf("Err() = %v", err)
	}
	res, _ = Run(sh(2, `exit 0`))
	if res.First != nil || res.Status() != 0 || res.Err() != nil {
		t.Fatalf("clean job: %+v", res)
	}
}

func TestKilledBySignal(t *testing.T) {
	res, err := Run(sh(1, `kill -9 $$`))
	if err != nil {
		t.Fatal(err)
	}
	if e := res.Ends[0]; e.Signal != syscall.SIGKILL || e.Code != -1 || e.Status() != 137 || !strings.Contains(e.String(), "killed by signal 9") {
		t.Fatalf("end %+v (%v)", e, e)
	}
}

// readyThenFail is a job where PE 1 exits 5 once the test closes its stdin,
// and the others print "ready" and sleep, ignoring SIGTERM when ignoreTerm.
func readyThenFail(t *testing.T, ignoreTerm bool, grace time.Duration) (Result, string) {
	trap := ""
	if ignoreTerm {
		trap = `trap "" TERM;`
	}
	cfg := sh(3, `if [ "$SHMEM_RANK" = 1 ]; then read x; exit 5; fi; `+trap+` echo ready; exec sleep 3600`)
	cfg.KillOnFailure, cfg.Grace, cfg.Stdin = true, grace, true
	var logMu sync.Mutex
	var log strings.Builder
	cfg.Logf = func(f string, a ...any) {
		logMu.Lock()
		defer logMu.Unlock()
		fmt.Fprintf(&log, f+"\n", a...)
	}
	ready := make(chan int, 3)
	cfg.OnLine = func(rank int, line string) {
		if line == "ready" {
			ready <- rank
		}
	}
	j, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	<-ready
	<-ready
	j.PE(1).Stdin().Close()
	res := j.Wait()
	logMu.Lock()
	defer logMu.Unlock()
	return res, log.String()
}

// TestKillOnFailure: the first failure stops the others with SIGTERM; PEs
// that ignore it get SIGKILL after the grace period.
func TestKillOnFailure(t *testing.T) {
	res, log := readyThenFail(t, false, time.Hour)
	if res.Status() != 5 || res.First.Rank != 1 {
		t.Fatalf("status %d, first %+v", res.Status(), res.First)
	}
	for _, r := range []int{0, 2} {
		if res.Ends[r].Signal != syscall.SIGTERM {
			t.Errorf("PE %d: %v, want SIGTERM", r, res.Ends[r])
		}
	}
	if !strings.Contains(log, "stopping the other PEs") {
		t.Errorf("no notice of the stop:\n%s", log)
	}
	res, log = readyThenFail(t, true, 0)
	for _, r := range []int{0, 2} {
		if res.Ends[r].Signal != syscall.SIGKILL {
			t.Errorf("PE %d ignoring SIGTERM: %v, want SIGKILL", r, res.Ends[r])
		}
	}
	if res.Status() != 5 || !strings.Contains(log, "still running after") {
		t.Errorf("status %d, log:\n%s", res.Status(), log)
	}
}

func TestTimeout(t *testing.T) {
	cfg := sh(2, `exec sleep 3600`)
	cfg.Timeout = time.Millisecond
	res, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || !errors.Is(res.Err(), errs.ErrTimeout) {
		t.Fatalf("result %+v, err %v", res, res.Err())
	}
	for _, e := range res.Ends {
		if e.Signal == 0 {
			t.Errorf("%v, want stopped by a signal", e)
		}
	}
}

// TestQuitOnTimeout: at the timeout the PEs get SIGQUIT first, so that
// a hung Go PE prints its stacks into the captured output before the stop.
func TestQuitOnTimeout(t *testing.T) {
	cfg := sh(2, `trap 'echo stacks of $SHMEM_RANK; exit 7' QUIT; sleep 3600 & wait`)
	// The timeout leaves the shell time to set its trap (a QUIT before
	// it would end the shell by the default action).
	cfg.Timeout, cfg.QuitOnTimeout, cfg.Capture = time.Second, true, true
	j, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	res := j.Wait()
	if !res.TimedOut {
		t.Fatalf("result %+v, want timed out", res)
	}
	for r, e := range res.Ends {
		if out := j.PE(r).Output(); e.Code != 7 || !strings.Contains(out, "stacks of "+strconv.Itoa(r)) {
			t.Errorf("PE %d: %v with output %q, want exit 7 from its QUIT handler", r, e, out)
		}
	}
}

func TestKillAndSignals(t *testing.T) {
	j, err := Start(sh(2, `exec sleep 3600`))
	if err != nil {
		t.Fatal(err)
	}
	j.Kill()
	j.Kill() // idempotent
	for _, e := range j.Wait().Ends {
		if e.Signal != syscall.SIGKILL {
			t.Errorf("after Kill: %v", e)
		}
	}
	sigs := make(chan os.Signal, 1)
	cfg := sh(2, `exec sleep 3600`)
	cfg.Signals, cfg.Grace = sigs, time.Hour
	j, err = Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sigs <- syscall.SIGINT
	res := j.Wait()
	if res.Signal != syscall.SIGINT || res.Status() != 130 {
		t.Fatalf("forwarded SIGINT: %+v", res)
	}
	if err := j.PE(0).Signal(syscall.SIGTERM); !errors.Is(err, os.ErrProcessDone) {
		t.Fatalf("signal after the end: %v", err)
	}
}

// TestOutput: lines are prefixed, whole, on the right stream, and
// captured; a last line without a newline gets one.
func TestOutput(t *testing.T) {
	var out, errb bytes.Buffer
	cfg := sh(2, `echo "out $SHMEM_RANK"; echo "err $SHMEM_RANK" >&2; printf tail`)
	cfg.Stdout, cfg.Stderr, cfg.Prefix, cfg.Capture = &out, &errb, RankPrefix, true
	j, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	res := j.Wait()
	if res.Err() != nil {
		t.Fatal(res.Err())
	}
	for r := 0; r < 2; r++ {
		p := RankPrefix(r)
		for _, want := range []string{p + "out " + strconv.Itoa(r) + "\n", p + "tail\n"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("stdout lacks %q:\n%s", want, out.String())
			}
		}
		if !strings.Contains(errb.String(), p+"err "+strconv.Itoa(r)+"\n") {
			t.Errorf("stderr lacks PE %d's line:\n%s", r, errb.String())
		}
		got := strings.Split(strings.TrimSpace(j.PE(r).Output()), "\n")
		slices.Sort(got)
		if want := []string{"err " + strconv.Itoa(r), "out " + strconv.Itoa(r), "tail"}; !slices.Equal(got, want) {
			t.Errorf("PE %d captured %q, want %q", r, got, want)
		}
	}
}

func TestEnv(t *testing.T) {
	base := []string{"PATH=/bin", "SHMEM_RANK=9", "SHMEM_UID_FILE=/tmp/x", "SHMEM_LAUNCHER_PID=1", "SHMEM_JOB_SECRET=old", "X=1", "HOME=/h"}
	c := Config{NPEs: 3, UniqueID: "gsu1.tok", RankEnv: func(r int) []string { return []string{"X=2", "R=" + strconv.Itoa(r)} }}
	got := c.env(2, base, 77)
	want := []string{"PATH=/bin", "SHMEM_JOB_SECRET=old", "HOME=/h",
		"SHMEM_RANK=2", "SHMEM_NPES=3", "SHMEM_LOCAL_RANK=2", "SHMEM_LOCAL_SIZE=3", "SHMEM_UNIQUE_ID=gsu1.tok",
		"SHMEM_LAUNCHER_PID=77", "X=2", "R=2"}
	if !slices.Equal(got, want) {
		t.Fatalf("env:\n got %q\nwant %q", got, want)
	}
	// Hosts: local ranks among the PEs of one host; a secret and a file.
	c = Config{NPEs: 4, Hosts: []int{0, 1, 0, 1}, UIDFile: "/u", Secret: "s"}
	got = c.env(3, nil, 5)
	want = []string{"SHMEM_RANK=3", "SHMEM_NPES=4", "SHMEM_LOCAL_RANK=1", "SHMEM_LOCAL_SIZE=2",
		"SHMEM_HOST_ID=host1", "SHMEM_UID_FILE=/u", "SHMEM_JOB_SECRET=s", "SHMEM_LAUNCHER_PID=5"}
	if !slices.Equal(got, want) {
		t.Fatalf("env with hosts:\n got %q\nwant %q", got, want)
	}
	// NoRank: a gossip world's PEs number themselves.
	c = Config{NPEs: 2, NoRank: true}
	got = c.env(1, []string{"SHMEM_RANK=0", "A=b"}, 5)
	if want = []string{"A=b", "SHMEM_LAUNCHER_PID=5"}; !slices.Equal(got, want) {
		t.Fatalf("env without rank:\n got %q\nwant %q", got, want)
	}
	// Bound PEs learn every PE's CPUs, which they may widen to; unbound
	// ones lose an inherited list.
	c = Config{NPEs: 2, NoRank: true, CPUs: [][]int{{2, 3}, {0, 1}}}
	got = c.env(1, []string{"SHMEM_CPUS_ALLOWED=7"}, 5)
	if want = []string{"SHMEM_LAUNCHER_PID=5", "SHMEM_CPUS_ALLOWED=0,1,2,3"}; !slices.Equal(got, want) {
		t.Fatalf("env of a bound PE:\n got %q\nwant %q", got, want)
	}
	c.CPUs = nil
	if got = c.env(1, []string{"SHMEM_CPUS_ALLOWED=7"}, 5); !slices.Equal(got, []string{"SHMEM_LAUNCHER_PID=5"}) {
		t.Fatalf("env of an unbound PE: %q", got)
	}
}

// TestRanksAndCommand: a launcher that starts part of a job, through a
// command hook, with an environment of its own.
func TestRanksAndCommand(t *testing.T) {
	var hooked []int
	cfg := sh(4, `echo "$SHMEM_RANK/$SHMEM_NPES $ONLY"`)
	cfg.Ranks, cfg.Capture, cfg.Env = []int{3, 1}, true, []string{"ONLY=yes"}
	cfg.Command = func(rank int, name string, args ...string) *exec.Cmd {
		hooked = append(hooked, rank)
		return exec.Command(name, args...)
	}
	j, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	res := j.Wait()
	if len(res.Ends) != 2 || res.Ends[0].Rank != 3 || res.Ends[1].Rank != 1 || j.PE(0) != nil {
		t.Fatalf("ends %+v", res.Ends)
	}
	if !slices.Equal(hooked, []int{3, 1}) {
		t.Fatalf("hook called for %v", hooked)
	}
	if got := j.PE(3).Output(); got != "3/4 yes\n" {
		t.Fatalf("PE 3 printed %q", got)
	}
}

func TestStartErrors(t *testing.T) {
	for _, cfg := range []Config{
		{NPEs: 1},
		{Program: "x", NPEs: 0},
		{Program: "x", NPEs: 2, Ranks: []int{1, 1}},
		{Program: "x", NPEs: 2, Ranks: []int{2}},
		{Program: "x", NPEs: 2, Hosts: []int{0}},
		{Program: "x", NPEs: 2, Grace: -1},
	} {
		if _, err := Start(cfg); !errors.Is(err, errs.ErrInvalidArgument) {
			t.Errorf("Start(%+v) = %v, want ErrInvalidArgument", cfg, err)
		}
	}
	// PE 0 starts (and is killed and reaped), PE 1's program is missing.
	cfg := sh(2, `exec sleep 3600`)
	cfg.Command = func(rank int, name string, args ...string) *exec.Cmd {
		if rank == 1 {
			name = "/nonexistent/pe"
		}
		return exec.Command(name, args...)
	}
	if _, err := Start(cfg); err == nil || !strings.Contains(err.Error(), "starting PE 1") {
		t.Fatalf("missing program: %v", err)
	}
}

// TestPEsDieWithTheLauncher kills a launcher (this test binary, re-run as
// helperLauncher) with SIGKILL: its PEs must die with it, by their
// parent-death signal.
func TestPEsDieWithTheLauncher(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envHelper+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pids []int
	sc := bufio.NewScanner(stdout)
	for len(pids) < 2 && sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "PID "); ok {
			pid, _ := strconv.Atoi(v)
			pids = append(pids, pid)
		}
	}
	if len(pids) < 2 {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("the helper launcher reported %v", pids)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	awaitGone(t, pids)
}

// awaitGone polls until no pid is a live process, failing after a bound
// far above the few milliseconds the kernel takes.
func awaitGone(t *testing.T, pids []int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("PE process %d outlived its launcher", pid)
			}
			time.Sleep(5 * time.Millisecond) // polling /proc: there is nothing to wait on
		}
	}
}

// TestStatusReports: PEs report on the descriptor SHMEM_STATUS_FD names
// (here a shell writes the lines goshmem's PEs write). PE 1 calls the
// "GlobalExit" and exits last, yet names the job's end; PE 0 leaves a
// process behind that holds its socket, which must not hold the job.
func TestStatusReports(t *testing.T) {
	cfg := sh(3, `case $SHMEM_RANK in
		1) echo "global-exit 4" >&$SHMEM_STATUS_FD; sleep 0.3;;
		0) echo finalized >&$SHMEM_STATUS_FD; sleep 2 >/dev/null 2>&1 & ;;
		esac; exit 4`)
	start := time.Now()
	res, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 1500*time.Millisecond {
		t.Errorf("the job took %v: a process left behind held it", took)
	}
	if res.GlobalExit == nil || *res.GlobalExit != (GlobalExit{Rank: 1, Status: 4}) || res.Status() != 4 {
		t.Fatalf("result %+v", res)
	}
	if !res.Ends[0].Reported.Finalized || res.Ends[2].Reported != (pestatus.Report{}) {
		t.Errorf("reports %+v", res.Ends)
	}
	if got := res.Summary(); got != "job ended: PE 1 called GlobalExit(4)" {
		t.Errorf("Summary %q", got)
	}
}
