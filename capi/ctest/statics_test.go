package ctest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goshmem/shmem/internal/launch"
	"github.com/goshmem/shmem/internal/launch/launchtest"
	"github.com/goshmem/shmem/transport/udma"
)

// TestStatics runs statics.c (RMA, atomics, wait, signal, locks, the
// active-set and team collectives on global and static variables, and the
// spec's `static long dest[10]` example) on 2 and 4 PEs of one host, then
// with its last PE killed by SIGKILL after every PE put into its statics.
// None may leave a file in /dev/shm: the statics are a memfd (statics.c
// checks that its mapping says so) and goshmem's heap segments are
// unlinked once mapped.
func TestStatics(t *testing.T) {
	setup(t)
	before := shmNames(t)
	prog := compile(t, "statics")
	var outs []string
	for _, np := range []int{2, 4} {
		out := shmemrun(t, np, prog)
		if strings.Contains(out, "FAIL") || strings.Count(out, "statics ok") != np {
			t.Fatalf("-np %d: want %d lines %q\n%s", np, np, "statics ok", out)
		}
		outs = append(outs, out)
	}
	out, err := exec.Command(tools.shmrun, "-np", "3", "--timeout", "60s", prog, "kill").CombinedOutput()
	if err == nil || strings.Contains(string(out), "FAIL") || strings.Count(string(out), "pid ") != 3 {
		t.Fatalf("the job with a killed PE: err %v, want a failed job after every PE started\n%s", err, out)
	}
	outs = append(outs, string(out))
	checkShmClean(t, before, pids(strings.Join(outs, "\n")))
}

// checkShmClean fails for a goshmem segment in /dev/shm owned by one of
// pids, or a new file that is not a goshmem segment but is named for
// goshmem or statics. Other jobs may run on this machine meanwhile: their
// segments come and go and are none of this test's business.
func checkShmClean(t *testing.T, before map[string]bool, pids map[int]bool) {
	t.Helper()
	segs, err := udma.List("")
	if err != nil {
		t.Fatal(err)
	}
	seg := map[string]bool{}
	for _, s := range segs {
		seg[s.Name] = true
		if s.Valid && pids[s.OwnerPID] {
			t.Errorf("%s (PE %d's heap, pid %d) was left in /dev/shm", s.Name, s.Rank, s.OwnerPID)
		}
	}
	for name := range shmNames(t) {
		base := strings.ToLower(filepath.Base(name))
		// A heap segment another job created after List is not in seg;
		// the first check covers this test's own.
		if !before[name] && !seg[name] && !isSegmentName(name) && (strings.Contains(base, "goshmem") || strings.Contains(base, "static")) {
			t.Errorf("%s was left in /dev/shm", name)
		}
	}
}

// isSegmentName reports whether path is named as a goshmem heap segment
// (udma.SegmentName of some job and rank).
func isSegmentName(path string) bool {
	rest, ok := strings.CutPrefix(filepath.Base(path), "goshmem-")
	i := strings.LastIndexByte(rest, '-')
	if !ok || i < 0 {
		return false
	}
	rank, err := strconv.Atoi(rest[i+1:])
	if err != nil {
		return false
	}
	name, err := udma.SegmentName(rest[:i], rank)
	return err == nil && name == path
}

// pids collects the "pid N" lines of the PEs' output.
func pids(out string) map[int]bool {
	m := map[int]bool{}
	for _, line := range strings.Split(out, "\n") {
		if i := strings.Index(line, "pid "); i >= 0 {
			if n, err := strconv.Atoi(strings.TrimSpace(line[i+4:])); err == nil {
				m[n] = true
			}
		}
	}
	return m
}

// TestStaticsTCP runs statics.c with TCP between the PEs (shmemrun
// --network), where no peer's statics are mapped: every access to a
// peer's static goes over the network, which carries the statics as it
// carries the heap. Every check of the same-host run holds, but that
// shmem_ptr of a peer's static is NULL.
func TestStaticsTCP(t *testing.T) {
	setup(t)
	prog := compile(t, "statics")
	for _, np := range []int{2, 3} {
		out := shmemrunFlags(t, []string{"-np", strconv.Itoa(np), "--network"}, prog, "tcp")
		if strings.Contains(out, "FAIL") || strings.Count(out, "statics ok") != np {
			t.Fatalf("-np %d --network: want %d lines %q\n%s", np, np, "statics ok", out)
		}
	}
}

// shmNames lists /dev/shm.
func shmNames(t *testing.T) map[string]bool {
	t.Helper()
	ents, err := os.ReadDir(udma.Dir)
	if err != nil {
		t.Skipf("no %s: %v", udma.Dir, err)
	}
	names := map[string]bool{}
	for _, e := range ents {
		names[udma.Dir+"/"+e.Name()] = true
	}
	return names
}

// TestStaticsLayoutMismatch runs the two builds of layout.c, whose
// statics have the same size but different variables, as one world: Init
// refuses it on both PEs, naming the other. Each build alone starts.
func TestStaticsLayoutMismatch(t *testing.T) {
	setup(t)
	progs := []string{compile(t, "layout", "-DLAYOUT=1"), compile(t, "layout", "-DLAYOUT=2")}
	for _, prog := range progs {
		if out := shmemrun(t, 2, prog); strings.Count(out, "layout ok") != 2 {
			t.Fatalf("%s alone: want 2 lines %q\n%s", prog, "layout ok", out)
		}
	}
	uid := launchtest.LoopbackUID(t, false)
	j, err := launch.Start(launch.Config{Program: progs[0], NPEs: 2, UniqueID: uid.String(), Env: cleanEnv(),
		Capture: true, Timeout: time.Minute, QuitOnTimeout: true,
		Command: func(rank int, _ string, args ...string) *exec.Cmd { return exec.Command(progs[rank], args...) }})
	if err != nil {
		t.Fatal(err)
	}
	res := j.Wait()
	for r, e := range res.Ends {
		out := j.PE(r).Output()
		if e.Code == 0 || strings.Contains(out, "layout ok") || !strings.Contains(out, "laid out differently") ||
			!strings.Contains(out, fmt.Sprintf("PE %d", 1-r)) {
			t.Errorf("PE %d exited %d; want Init refused, naming PE %d and the layout:\n%s", r, e.Code, 1-r, out)
		}
	}
}
