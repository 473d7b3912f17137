package main

import (
	"bytes"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestParseArgs(t *testing.T) {
	c, err := parseArgs([]string{"-np", "4", "--no-tls", "--heap", "512m", "--network", "--timeout", "90s", "-v", "prog", "-np", "7", "x"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := config{NP: 4, NoTLS: true, Heap: "512m", Network: true, Timeout: 90 * time.Second, Grace: 5 * time.Second, Verbose: true, Prog: "prog", Args: []string{"-np", "7", "x"}}
	if c.Prog != want.Prog || !slices.Equal(c.Args, want.Args) || c.NP != 4 || !c.NoTLS || c.Heap != "512m" || !c.Network || c.Timeout != want.Timeout || c.Grace != want.Grace || !c.Verbose {
		t.Fatalf("got %+v, want %+v", c, want)
	}
	if c.BindTo != "auto" {
		t.Fatalf("default -bind-to %q, want auto", c.BindTo)
	}
	c, err = parseArgs([]string{"-np", "2", "--bind-to", "none", "--", "-weird-prog"}, io.Discard)
	if err != nil || c.Prog != "-weird-prog" || len(c.Args) != 0 || c.BindTo != "none" {
		t.Fatalf("after --: %+v, %v", c, err)
	}
	for _, bad := range [][]string{
		{"prog"},                           // no -np
		{"-np", "0", "prog"},               // too few
		{"-np", "2"},                       // no program
		{"-np", "2", "-heap", "lots", "p"}, // bad size
		{"-np", "2", "-timeout", "-1s", "p"},
		{"-np", "x", "p"},
		{"-np", "2", "-bogus", "p"},
		{"-np", "2", "-bind-to", "socket", "p"},
	} {
		if _, err := parseArgs(bad, io.Discard); err == nil {
			t.Errorf("parseArgs(%q) accepted", bad)
		}
	}
	if _, err := parseArgs([]string{"-h"}, io.Discard); !errors.Is(err, errHelp) {
		t.Errorf("-h: %v", err)
	}
}

func TestChildEnv(t *testing.T) {
	base := []string{"PATH=/bin", "SHMEM_RANK=9", "SHMEM_UID_FILE=/tmp/x", "SHMEM_SYMMETRIC_SIZE=1g", "SHMEM_TRANSPORT=shm", "HOME=/h"}
	c := config{NP: 3, Heap: "2m", Network: true, Timeout: time.Minute}
	got := childEnv(base, c, "gsu1.tok", 2)
	want := []string{"PATH=/bin", "HOME=/h",
		"SHMEM_RANK=2", "SHMEM_NPES=3", "SHMEM_LOCAL_RANK=2", "SHMEM_LOCAL_SIZE=3", "SHMEM_UNIQUE_ID=gsu1.tok",
		"SHMEM_SYMMETRIC_SIZE=2m", "SHMEM_TRANSPORT=tcp", "SHMEM_INIT_TIMEOUT=1m0s"}
	if !slices.Equal(got, want) {
		t.Fatalf("childEnv:\n got %q\nwant %q", got, want)
	}
	// Without the settings, the caller's values pass through.
	got = childEnv(base, config{NP: 1}, "u", 0)
	want = []string{"PATH=/bin", "SHMEM_SYMMETRIC_SIZE=1g", "SHMEM_TRANSPORT=shm", "HOME=/h",
		"SHMEM_RANK=0", "SHMEM_NPES=1", "SHMEM_LOCAL_RANK=0", "SHMEM_LOCAL_SIZE=1", "SHMEM_UNIQUE_ID=u"}
	if !slices.Equal(got, want) {
		t.Fatalf("childEnv plain:\n got %q\nwant %q", got, want)
	}
}

func TestNeedsSessionDefault(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if !needsSessionDefault(env(nil)) {
		t.Error("empty environment should get the loopback default")
	}
	if needsSessionDefault(env(map[string]string{"SHMEM_UID_SESSION_ID": "10.0.0.1:5000"})) {
		t.Error("SHMEM_UID_SESSION_ID must win")
	}
	if needsSessionDefault(env(map[string]string{"SHMEM_UID_SOCK_IFNAME": "eth0"})) {
		t.Error("SHMEM_UID_SOCK_IFNAME must win")
	}
}

func TestTally(t *testing.T) {
	tl := newTally(3)
	if tl.record(end{Rank: 0}) || tl.done() || tl.status() != 0 {
		t.Fatal("a clean end must not stop anything")
	}
	if !tl.record(end{Rank: 2, Code: 5}) {
		t.Fatal("the first failure must stop the others")
	}
	if tl.record(end{Rank: 1, Code: -1, Signal: syscall.SIGTERM}) {
		t.Fatal("a later failure must not ask again")
	}
	if !tl.done() || tl.status() != 5 || tl.failure() != "PE 2 exited with status 5" {
		t.Fatalf("done %v status %d failure %q", tl.done(), tl.status(), tl.failure())
	}
	tl = newTally(2)
	tl.record(end{Rank: 1, Code: -1, Signal: syscall.SIGINT})
	if tl.status() != 130 || !strings.Contains(tl.failure(), "PE 1 was killed by signal 2") {
		t.Fatalf("signal: status %d failure %q", tl.status(), tl.failure())
	}
	// The last PE failing has no one left to stop.
	tl = newTally(1)
	if tl.record(end{Rank: 0, Code: 3}) || tl.status() != 3 {
		t.Fatal("single PE failure")
	}
}

func TestEndOf(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "exit 4")
	err := cmd.Run()
	if e := endOf(1, cmd.ProcessState, err); e != (end{Rank: 1, Code: 4}) {
		t.Fatalf("exit 4: %+v", e)
	}
	cmd = exec.Command("/bin/sh", "-c", "kill -9 $$")
	err = cmd.Run()
	if e := endOf(0, cmd.ProcessState, err); e != (end{Rank: 0, Code: -1, Signal: syscall.SIGKILL}) || e.status() != 137 {
		t.Fatalf("killed: %+v", e)
	}
	if e := endOf(2, nil, errors.New("x")); !e.failed() {
		t.Fatal("no process state must count as a failure")
	}
}

func TestPrefixer(t *testing.T) {
	var out bytes.Buffer
	s := &sink{w: &out}
	a, b := newPrefixer("[PE 0] ", s), newPrefixer("[PE 1] ", s)
	a.Write([]byte("hel"))
	b.Write([]byte("one\ntw"))
	a.Write([]byte("lo\nworld\n\npart"))
	b.Write([]byte("o\n"))
	a.Close()
	b.Close()
	want := "[PE 1] one\n[PE 0] hello\n[PE 0] world\n[PE 0] \n[PE 1] two\n[PE 0] part\n"
	if out.String() != want {
		t.Fatalf("got %q\nwant %q", out.String(), want)
	}
}

func TestPrefixerLongLine(t *testing.T) {
	var out bytes.Buffer
	p := newPrefixer("> ", &sink{w: &out})
	long := strings.Repeat("x", maxLine+10)
	p.Write([]byte(long))
	p.Close()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 2 || lines[0] != "> "+long[:maxLine] || lines[1] != "> "+long[maxLine:] {
		t.Fatalf("long line split into %d lines of lengths %d", len(lines), len(lines[0]))
	}
}

// TestPrefixerConcurrent checks that lines written from many goroutines
// arrive whole.
func TestPrefixerConcurrent(t *testing.T) {
	var out bytes.Buffer
	s := &sink{w: &out}
	var wg sync.WaitGroup
	for r := 0; r < 8; r++ {
		p := newPrefixer("[PE "+string(rune('0'+r))+"] ", s)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				p.Write([]byte("abc"))
				p.Write([]byte("def\n"))
			}
			p.Close()
		}()
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 8*200 {
		t.Fatalf("%d lines, want %d", len(lines), 8*200)
	}
	for _, l := range lines {
		if len(l) != len("[PE 0] abcdef") || !strings.HasSuffix(l, "] abcdef") {
			t.Fatalf("torn line %q", l)
		}
	}
}
