package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestMain runs the benches instead of the tests in the PEs that
// launchPEs starts: they are this test binary, given shmem-perf's flags.
func TestMain(m *testing.M) {
	if os.Getenv(envChild) != "" {
		if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, "shmem-perf:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestLaunchPEs: -np 2 starts two PEs of this binary on loopback; PE 0's
// CSV row reaches stdout unprefixed.
func TestLaunchPEs(t *testing.T) {
	t.Setenv("SHMEM_UID_SESSION_ID", "")
	var out, errb bytes.Buffer
	if err := run([]string{"-np", "2", "-b", "barrier", "-csv", "-bind", "none"}, &out, &errb); err != nil {
		t.Fatalf("%v\nstderr:\n%s", err, errb.String())
	}
	if !strings.Contains(out.String(), "\ngoshmem,udma,barrier,0,") {
		t.Fatalf("no barrier row from PE 0:\n%s\nstderr:\n%s", out.String(), errb.String())
	}
}

// TestLaunchRawTCP: the raw TCP references connect PE 0 to PE 1 with its
// token (rawPair) and print their rows.
func TestLaunchRawTCP(t *testing.T) {
	t.Setenv("SHMEM_UID_SESSION_ID", "")
	var out, errb bytes.Buffer
	if err := run([]string{"-np", "2", "-b", "tcp_rtt", "-iters", "50", "-csv", "-bind", "none"}, &out, &errb); err != nil {
		t.Fatalf("%v\nstderr:\n%s", err, errb.String())
	}
	for _, row := range []string{"\ngoshmem,udma,tcp_rtt,8,", "\ngoshmem,udma,tcp_rtt_poll,8,"} {
		if !strings.Contains(out.String(), row) {
			t.Fatalf("no %q row from PE 0:\n%s\nstderr:\n%s", row[1:], out.String(), errb.String())
		}
	}
}
