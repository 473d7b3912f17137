package bootstrap

import (
	"os"
	"strconv"
	"strings"

	"github.com/goshmem/shmem/internal/errs"
	"golang.org/x/sys/unix"
)

// EnvLauncherPID is set by goshmem's launchers (shmemrun, internal/launch)
// to their own pid, so that a PE can tell at start-up whether its launcher
// still lives (CheckLauncher).
const EnvLauncherPID = "SHMEM_LAUNCHER_PID"

// EnvStatusFD is set by goshmem's launchers to the number of a descriptor
// they gave the PE (a Unix stream socket) on which the PE reports how its
// run ends: that it finalized, that it called GlobalExit, which PE it
// first saw fail. The launcher names the PE that ended the job from these
// reports rather than from the order it hears the exits in. A process
// that does not use goshmem ignores it; one that does marks the
// descriptor close-on-exec at Init.
const EnvStatusFD = "SHMEM_STATUS_FD"

// maxAncestry bounds the walk up the process tree: a PE sits a few levels
// below its launcher (go run, a shell, ip netns exec), never dozens.
const maxAncestry = 32

// CheckLauncher makes a PE die with the launcher that getenv's
// EnvLauncherPID names, and fails when that launcher is already gone. It
// does nothing when the variable is unset (Slurm, torchrun, a PE started
// by hand).
//
// Why both: the launcher sets a parent-death signal on the processes it
// starts, but that signal reaches only its direct children and only if the
// launcher dies after the fork. CheckLauncher sets the same signal on this
// process for the death of its own parent (a PE started through `go run`
// or a shell is a grandchild: that parent is killed with the launcher),
// then checks that the launcher is still an ancestor, which covers a
// launcher that died before the signal was armed. The error wraps
// errs.ErrBootstrap and says the launcher is gone; the caller must not
// start the PE.
//
// A parent in another pid namespace (getppid 0) or an unreadable /proc
// cannot be judged; CheckLauncher then lets the PE run.
func CheckLauncher(getenv func(string) string) error {
	v := strings.TrimSpace(getenv(EnvLauncherPID))
	if v == "" {
		return nil
	}
	launcher, err := strconv.Atoi(v)
	if err != nil || launcher < 1 {
		return launcherErr("%s=%q is not a process id", EnvLauncherPID, v)
	}
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0); err != nil {
		return launcherErr("arming the parent-death signal: %v", err)
	}
	ppid := os.Getppid()
	if gone, pid := launcherGone(launcher, ppid, parentOf); gone {
		return launcherErr("the launcher (pid %d) that started this PE is gone (its ancestors end at pid %d): exiting rather than running orphaned", launcher, pid)
	}
	return nil
}

func launcherErr(format string, args ...any) error {
	return errs.New("Init", errs.NoPE, errs.NoPE, errs.ErrBootstrap, format, args...)
}

// launcherGone walks up from ppid with parent (pid -> its parent, ok false
// when unknown) and reports whether launcher is not among the ancestors,
// with the pid where the walk ended. It answers false whenever the walk
// cannot tell.
func launcherGone(launcher, ppid int, parent func(int) (int, bool)) (bool, int) {
	pid := ppid
	for i := 0; i < maxAncestry; i++ {
		switch {
		case pid == launcher:
			return false, pid
		case pid == 0:
			return false, pid // a parent outside our pid namespace
		case pid == 1:
			return true, pid
		}
		next, ok := parent(pid)
		if !ok {
			return false, pid
		}
		pid = next
	}
	return false, pid
}

// parentOf reads pid's parent from /proc/<pid>/stat; the command name in
// parentheses may hold spaces and parentheses, so the fields are read after
// its last ')'.
func parentOf(pid int) (int, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, err == nil
}
