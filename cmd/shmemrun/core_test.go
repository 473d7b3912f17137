package main

import (
	"errors"
	"io"
	"slices"
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
	if c, err := parseArgs([]string{"-n", "3", "prog"}, io.Discard); err != nil || c.NP != 3 {
		t.Fatalf("-n 3 (oshrun's spelling): %+v, %v", c, err)
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

func TestSettings(t *testing.T) {
	got := settings(config{NP: 3, Heap: "2m", Network: true, Timeout: time.Minute})
	want := []string{"SHMEM_SYMMETRIC_SIZE=2m", "SHMEM_TRANSPORT=tcp", "SHMEM_INIT_TIMEOUT=1m0s"}
	if !slices.Equal(got, want) {
		t.Fatalf("settings:\n got %q\nwant %q", got, want)
	}
	// Without the flags, the caller's values pass through.
	if got := settings(config{NP: 1}); len(got) != 0 {
		t.Fatalf("settings without flags: %q", got)
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
