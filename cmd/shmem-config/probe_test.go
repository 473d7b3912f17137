package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/goshmem/shmem/bootstrap"
	"github.com/goshmem/shmem/internal/rendezvous"
	"github.com/goshmem/shmem/internal/secure"
)

func TestFindFabric(t *testing.T) {
	ld := "\tlibfabric.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libfabric.so.1\n"
	fi := "verbs:\n    version: 117.0\ntcp:\n    version: 117.0\nofi_rxm:\n    version: 117.0\n"
	r := findFabric(ld, fi, nil)
	if !r.Present || r.Path != "/usr/lib/x86_64-linux-gnu/libfabric.so.1" || strings.Join(r.Providers, ",") != "verbs,tcp,ofi_rxm" {
		t.Fatalf("%+v", r)
	}
	r = findFabric(ld, "", errors.New("exec: \"fi_info\": not found"))
	if !r.Present || len(r.Providers) != 0 || !strings.Contains(r.Note, "libfabric-bin") {
		t.Fatalf("without fi_info: %+v", r)
	}
	if r := findFabric("", "", errors.New("missing")); r.Present {
		t.Fatalf("nothing installed: %+v", r)
	}
}

// testUID makes a unique ID for a rank 0 listening on ln, TLS on.
func testUID(t *testing.T, addr string) bootstrap.UniqueID {
	t.Helper()
	uid, err := bootstrap.NewUniqueID(addr, true, [32]byte{1})
	if err != nil {
		t.Fatal(err)
	}
	if _, uid.Pin, err = secure.JobCert(uid.Secret[:]); err != nil {
		t.Fatal(err)
	}
	return uid
}

// TestDiagnoseProbesRankZero: with --uid, the report says this host
// reached and authenticated with rank 0, how many ranks had arrived, and a
// clock skew (same host here: within the round trip).
func TestDiagnoseProbesRankZero(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	uid := testUID(t, ln.Addr().String())
	server, _, err := secure.JobConfigs(uid.Secret[:])
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := rendezvous.Exchange(ctx, rendezvous.Config{Listener: ln, NPEs: 2, Secret: uid.Secret[:], ServerTLS: server, Timeout: time.Minute}, []byte("rank 0"))
		done <- err
	}()
	defer func() { cancel(); <-done }()

	var out, errb bytes.Buffer
	if st := run([]string{"--diagnose", "--uid", uid.String()}, &out, &errb); st != 0 {
		t.Fatalf("status %d: %s", st, errb.String())
	}
	var rep Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	rz := rep.Rendezvous
	if rz == nil || !rz.Reachable || rz.Arrived != 1 || rz.NPEs != 2 || !rz.TLS || rz.Error != "" {
		t.Fatalf("rendezvous section: %+v", rz)
	}
	if rz.ClockSkewMillis == nil {
		t.Fatal("a reached rank 0 reports no clock skew")
	}
	if skew := time.Duration(*rz.ClockSkewMillis * float64(time.Millisecond)); skew > time.Duration(rz.RTTMicros)*time.Microsecond || -skew > time.Duration(rz.RTTMicros)*time.Microsecond {
		t.Fatalf("same-host skew %v beyond the round trip %d µs", skew, rz.RTTMicros)
	}
}

// An unreachable rank 0 degrades the report with a step naming the address.
func TestDiagnoseUnreachableRankZero(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	rz := probeRendezvous(context.Background(), testUID(t, addr), 200*time.Millisecond)
	if rz.Reachable || rz.Error == "" || rz.ClockSkewMillis != nil {
		t.Fatalf("%+v (an unreached rank 0 has no measured skew)", rz)
	}
	r := Report{Rendezvous: rz}
	assess(&r)
	if !r.Degraded || !strings.Contains(strings.Join(r.NextSteps, " "), "rendezvous at "+addr) {
		t.Fatalf("assessment: %v %q", r.Degraded, r.NextSteps)
	}
	skew := -2500.0
	r = Report{Rendezvous: &RendezvousReport{Addr: addr, Reachable: true, ClockSkewMillis: &skew}}
	assess(&r)
	if !r.Degraded || !strings.Contains(strings.Join(r.NextSteps, " "), "clock") {
		t.Fatalf("skewed clock: %v %q", r.Degraded, r.NextSteps)
	}
}

func TestDiagnoseBadUID(t *testing.T) {
	var out, errb bytes.Buffer
	if st := run([]string{"--diagnose", "--uid", "not-a-unique-id"}, &out, &errb); st != 2 || !strings.Contains(errb.String(), "--uid") {
		t.Fatalf("status %d: %s", st, errb.String())
	}
}
