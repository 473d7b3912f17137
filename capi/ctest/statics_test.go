package ctest

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/goshmem/shmem/transport/udma"
)

// TestStatics runs statics.c (RMA, atomics, wait, signal, locks and the
// active-set collectives on global and static variables, and the spec's
// `static long dest[10]` example) on 2 and 4 PEs of one host, then a job
// whose last PE is killed with SIGKILL right after shmem_init. Neither may
// leave a name in /dev/shm: the statics are a memfd (statics.c checks its
// mapping says so) and goshmem's heap segments are unlinked once mapped.
func TestStatics(t *testing.T) {
	setup(t)
	before := shmNames(t)
	prog := compile(t, "statics")
	for _, np := range []int{2, 4} {
		out := shmemrun(t, np, prog)
		if strings.Contains(out, "FAIL") || strings.Count(out, "statics ok") != np {
			t.Fatalf("-np %d: want %d lines %q\n%s", np, np, "statics ok", out)
		}
	}
	killed := compile(t, "killed")
	out, err := exec.Command(tools.shmrun, "-np", "2", "--timeout", "60s", killed).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "PE 1 ready") {
		t.Fatalf("the job with a killed PE: err %v, want a failed job after init\n%s", err, out)
	}
	// Other jobs may run on this machine meanwhile: a new name is a leak
	// unless it is a goshmem segment whose owner still runs.
	segs, err := udma.List("")
	if err != nil {
		t.Fatal(err)
	}
	live := map[string]bool{}
	for _, s := range segs {
		if s.Valid && s.OwnerAlive {
			live[s.Name] = true
		}
	}
	for name := range shmNames(t) {
		if !before[name] && !live[name] {
			t.Errorf("%s was left in /dev/shm", name)
		}
	}
}

// TestStaticsTCP runs statics_tcp.c with TCP between the PEs, where no
// peer's statics are mapped: an RMA to a peer's static fails with the
// message the README documents, naming the call, the address and the PE.
func TestStaticsTCP(t *testing.T) {
	setup(t)
	prog := compile(t, "statics_tcp")
	out, err := exec.Command(tools.shmrun, "-np", "2", "--network", "--timeout", "60s", prog).CombinedOutput()
	s := string(out)
	want := "goshmem: shmem_long_put: invalid argument: address 0x"
	rule := "is static data and PE 1 is not mapped here (another host, or TCP forced): " +
		"static data is symmetric only between PEs on one host; use shmem_malloc for data that crosses hosts"
	if err == nil || strings.Contains(s, "FAIL") || strings.Count(s, "statics-tcp ok") != 2 ||
		!strings.Contains(s, want) || !strings.Contains(s, rule) {
		t.Fatalf("err %v; want 2 lines %q, then PE 0's abort %q...%q\n%s", err, "statics-tcp ok", want, rule, s)
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
