package bootstrap

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/goshmem/shmem/internal/errs"
)

func TestLauncherGone(t *testing.T) {
	// 40 -> 30 -> 20 -> 1: the tree a PE under "go run" under a launcher has.
	tree := map[int]int{40: 30, 30: 20, 20: 1}
	parent := func(pid int) (int, bool) { p, ok := tree[pid]; return p, ok }
	for _, tc := range []struct {
		launcher, ppid int
		gone           bool
	}{
		{30, 30, false}, // the launcher is the parent
		{20, 30, false}, // the launcher is the grandparent
		{99, 30, true},  // not an ancestor: the walk reaches init
		{99, 1, true},   // reparented to init
		{99, 0, false},  // parent in another pid namespace: cannot tell
		{99, 77, false}, // unreadable: cannot tell
	} {
		if gone, _ := launcherGone(tc.launcher, tc.ppid, parent); gone != tc.gone {
			t.Errorf("launcher %d, ppid %d: gone %v, want %v", tc.launcher, tc.ppid, gone, tc.gone)
		}
	}
}

func TestParentOf(t *testing.T) {
	if p, ok := parentOf(os.Getpid()); !ok || p != os.Getppid() {
		t.Fatalf("parentOf(self) = %d, %v; want %d", p, ok, os.Getppid())
	}
}

func TestCheckLauncher(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == EnvLauncherPID {
				return v
			}
			return ""
		}
	}
	if err := CheckLauncher(env("")); err != nil {
		t.Fatalf("unset: %v", err)
	}
	if err := CheckLauncher(env("x")); !errors.Is(err, errs.ErrBootstrap) {
		t.Fatalf("bad pid: %v", err)
	}
	// The parent-death signal armed here is for this test process's
	// parent (go test), which outlives it.
	if err := CheckLauncher(env(strconv.Itoa(os.Getppid()))); err != nil {
		t.Fatalf("parent as launcher: %v", err)
	}
	// A live process that is not an ancestor: a launcher that died and
	// whose pid was reused looks like this.
	other := exec.Command("sleep", "3600")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = other.Process.Kill()
		_ = other.Wait()
	}()
	err := CheckLauncher(env(strconv.Itoa(other.Process.Pid)))
	if !errors.Is(err, errs.ErrBootstrap) || !strings.Contains(err.Error(), "is gone") {
		t.Fatalf("launcher not an ancestor: %v", err)
	}
}
