package udma

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"
	"testing"

	"github.com/goshmem/shmem/internal/errs"
)

func TestParseName(t *testing.T) {
	cases := []struct {
		name string
		job  string
		rank int
		ok   bool
	}{
		{"goshmem-job-0", "job", 0, true},
		{"goshmem-a-b-12", "a-b", 12, true},
		{"goshmem-a-1-0", "a-1", 0, true},
		{"goshmem-job-", "", 0, false},
		{"goshmem--3", "", 0, false},
		{"goshmem-job-01", "", 0, false},
		{"goshmem-job-+1", "", 0, false},
		{"goshmem-job--1", "job-", 1, true}, // job "job-" is legal
		{"goshmem-job-1x", "", 0, false},
		{"goshmem-job-99999999999999999999999", "", 0, false},
		{"goshmem-j.b-1", "", 0, false},
		{"goshmemjob-1", "", 0, false},
		{"other-job-1", "", 0, false},
	}
	for _, c := range cases {
		job, rank, ok := parseName(c.name)
		if job != c.job || rank != c.rank || ok != c.ok {
			t.Errorf("parseName(%q) = %q, %d, %v", c.name, job, rank, ok)
		}
	}
}

func TestListAndReap(t *testing.T) {
	job := testJob(t)
	other := job + "-x" // a job whose names start with job's prefix
	for rank := range 3 {
		if _, err := createUnmapped(job, rank, 4096); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := createUnmapped(other, 0, 4096); err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = Reap(other) }()
	if err := os.Symlink("/etc/passwd", segPath(job, 7)); err != nil {
		t.Fatal(err)
	}

	got, err := List(job)
	if err != nil || len(got) != 4 {
		t.Fatalf("List: %v, %+v", err, got)
	}
	for i, info := range got[:3] {
		want := SegmentInfo{Name: segPath(job, i), Job: job, Rank: i, Size: HeaderSize + 4096,
			Valid: true, Ready: true, State: StateAlive, Heap: 4096, OwnerPID: os.Getpid(), OwnerAlive: true}
		if info != want {
			t.Errorf("List[%d] = %+v, want %+v", i, info, want)
		}
	}
	if link := got[3]; link.Rank != 7 || link.Valid {
		t.Errorf("symlink listed as %+v", link)
	}
	all, err := List("")
	if err != nil || len(all) < 5 {
		t.Fatalf("List(\"\"): %v, %d entries", err, len(all))
	}

	n, err := Reap(job)
	if err != nil || n != 4 {
		t.Fatalf("Reap = %d, %v; want 4", n, err)
	}
	if _, err := os.Stat("/etc/passwd"); err != nil {
		t.Fatalf("Reap touched a symlink's target: %v", err)
	}
	if left, _ := List(other); len(left) != 1 {
		t.Fatalf("Reap(%s) touched job %s: %+v", job, other, left)
	}
	if n, err := Reap(other); err != nil || n != 1 {
		t.Fatalf("Reap(other) = %d, %v", n, err)
	}
	if n, err := Reap(job); err != nil || n != 0 {
		t.Fatalf("second Reap = %d, %v", n, err)
	}
	if _, err := Reap(""); !errors.Is(err, errs.ErrInvalidArgument) {
		t.Fatalf("Reap(\"\"): %v", err)
	}
	if _, err := List("a/b"); !errors.Is(err, errs.ErrInvalidArgument) {
		t.Fatalf("List(a/b): %v", err)
	}
}

// createUnmapped creates a segment and drops this process's mapping, as a
// PE that has exited would leave it.
func createUnmapped(job string, rank, heap int) (string, error) {
	s, err := Create(job, rank, heap)
	if err != nil {
		return "", err
	}
	return s.Name(), s.Close()
}

func TestReapStaleSparesLiveAndForeign(t *testing.T) {
	job := testJob(t)
	s := mustCreate(t, job, 0, 4096)
	plant(t, job, 1, nil, HeaderSize+4096) // no magic
	if err := os.Symlink(s.Name(), segPath(job, 2)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Remove(segPath(job, 2)) })
	// A valid header whose owner pid is gone is not safe to fake here, so
	// ReapStale's removal is covered by TestCrashReap.
	if _, err := ReapStale(); err != nil {
		t.Fatal(err)
	}
	got, err := List(job)
	if err != nil || len(got) != 3 {
		t.Fatalf("after ReapStale: %v %+v", err, got)
	}
}

// TestCrashReap kills a process that holds two segments, then clears them
// once with ReapStale and once with Reap.
func TestCrashReap(t *testing.T) {
	for _, reaper := range []string{"ReapStale", "Reap"} {
		t.Run(reaper, func(t *testing.T) {
			job := testJob(t)
			c := startChild(t, "crasher", job, 4096)
			c.expect(t, "created")
			pid := c.cmd.Process.Pid
			if err := c.cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			err := c.cmd.Wait()
			if ws, ok := c.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
				t.Fatalf("child was not killed: %v", err)
			}
			got, err := List(job)
			if err != nil || len(got) != 2 {
				t.Fatalf("List after crash: %v %+v", err, got)
			}
			for _, info := range got {
				if !info.Valid || info.OwnerPID != pid || info.OwnerAlive {
					t.Fatalf("dead owner's segment listed as %+v", info)
				}
			}
			var n int
			if reaper == "Reap" {
				n, err = Reap(job)
			} else {
				n, err = ReapStale()
			}
			if err != nil || n < 2 {
				t.Fatalf("%s = %d, %v", reaper, n, err)
			}
		})
	}
}

func TestProcessAlive(t *testing.T) {
	pid := os.Getpid()
	start, ok := procStart(pid)
	if !ok || start == 0 {
		t.Fatalf("procStart = %d, %v", start, ok)
	}
	if !processAlive(pid, start) || !processAlive(pid, 0) {
		t.Fatal("this process looks dead")
	}
	if processAlive(pid, start+1) {
		t.Fatal("a different start time did not mark the pid as reused")
	}
	if processAlive(0, 0) || processAlive(-1, 0) {
		t.Fatal("non-positive pid looks alive")
	}
}

func TestShmInfo(t *testing.T) {
	total, free, err := ShmInfo()
	if err != nil || total <= 0 || free < 0 || free > total {
		t.Fatalf("ShmInfo = %d, %d, %v", total, free, err)
	}
}

func FuzzParseStat(f *testing.F) {
	if b, err := os.ReadFile("/proc/self/stat"); err == nil {
		f.Add(b)
	}
	f.Add([]byte("1 (a) b) S " + "0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 " + strconv.Itoa(12345) + " 0"))
	f.Add([]byte("()"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, _, ok := parseStat(b); ok && !bytes.Contains(b, []byte(")")) {
			t.Fatal("accepted a line without the command's ')'")
		}
	})
}
