package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/bootstrap"
	"github.com/goshmem/shmem/transport/udma"
)

// With GOSHMEM_TEST_STALE=job the test binary creates a segment of job
// and exits without removing it, as a crashed PE would.
func TestMain(m *testing.M) {
	if job := os.Getenv("GOSHMEM_TEST_STALE"); job != "" {
		if _, err := udma.Create(job, 0, 4096); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

func TestShmReport(t *testing.T) {
	segs := []udma.SegmentInfo{
		{Name: "/dev/shm/goshmem-a-0", Valid: true, OwnerAlive: true},
		{Name: "/dev/shm/goshmem-b-0", Valid: true},
		{Name: "/dev/shm/goshmem-c-1"},
	}
	r := shmReport(1<<30, 1<<29, nil, segs, nil)
	if r.TotalBytes != 1<<30 || r.FreeBytes != 1<<29 || r.Segments != 3 || r.Live != 1 ||
		!slices.Equal(r.Stale, []string{"/dev/shm/goshmem-b-0"}) || !slices.Equal(r.Unreadable, []string{"/dev/shm/goshmem-c-1"}) || r.Error != "" {
		t.Fatalf("%+v", r)
	}
	r = shmReport(0, 0, errors.New("statfs /dev/shm: no such file"), nil, errors.New("read"))
	if r.Error != "statfs /dev/shm: no such file" || r.Stale == nil {
		t.Fatalf("%+v", r)
	}
}

func TestListenReport(t *testing.T) {
	ifaces := []bootstrap.Iface{
		{Name: "lo", Up: true, Running: true, Addrs: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/8")}},
		{Name: "eth0", Up: true, Running: true, Addrs: []netip.Prefix{netip.MustParsePrefix("192.0.2.7/24")}},
	}
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	r := listenReport(env(nil), ifaces, nil)
	if r.Host != "192.0.2.7" || r.Iface != "eth0" || r.Source != bootstrap.SourceAuto || r.Reason == "" || r.Error != "" {
		t.Fatalf("auto: %+v", r)
	}
	r = listenReport(env(map[string]string{bootstrap.EnvUIDSessionID: "127.0.0.1:7000"}), ifaces, nil)
	if r.Host != "127.0.0.1" || r.Port != 7000 || r.Source != bootstrap.EnvUIDSessionID || r.Env[bootstrap.EnvUIDSessionID] != "127.0.0.1:7000" {
		t.Fatalf("session: %+v", r)
	}
	r = listenReport(env(nil), ifaces[:1], nil)
	if r.Error == "" || r.Host != "" {
		t.Fatalf("loopback only must be an error: %+v", r)
	}
	r = listenReport(env(nil), nil, errors.New("no netlink"))
	if r.Error != "no netlink" {
		t.Fatalf("interface error: %+v", r)
	}
}

func TestFindUCX(t *testing.T) {
	none := func(string) bool { return false }
	out := "1234 libs found in cache `/etc/ld.so.cache'\n\tlibucs.so.0 (libc6,x86-64) => /usr/lib/libucs.so.0\n\tlibucp.so.0 (libc6,x86-64) => /usr/lib/libucp.so.0\n"
	if r := findUCX(out, none); r != (UCXReport{Present: true, Path: "/usr/lib/libucp.so.0", Via: "ldconfig"}) {
		t.Fatalf("ldconfig: %+v", r)
	}
	only := func(p string) bool { return p == "/opt/ucx/lib/libucp.so" }
	if r := findUCX("", only); r != (UCXReport{Present: true, Path: "/opt/ucx/lib/libucp.so", Via: "path"}) {
		t.Fatalf("path: %+v", r)
	}
	if r := findUCX("\tlibucs.so.0 => /x\n", none); r.Present {
		t.Fatalf("absent: %+v", r)
	}
}

func TestRDMAReport(t *testing.T) {
	if r := rdmaReport([]string{"mlx5_1", "mlx5_0"}); !r.Present || !slices.Equal(r.Devices, []string{"mlx5_0", "mlx5_1"}) {
		t.Fatalf("%+v", r)
	}
	if r := rdmaReport(nil); r.Present || r.Devices == nil {
		t.Fatalf("%+v", r)
	}
}

func healthy() Report {
	return Report{
		Shm:    ShmReport{Dir: "/dev/shm", TotalBytes: 8 << 30, FreeBytes: 8 << 30, Stale: []string{}, Unreadable: []string{}},
		Listen: ListenReport{Host: "192.0.2.7"},
		Limits: LimitsReport{NoFile: Limit{Soft: 65536, Hard: 65536}, MemLock: Limit{Soft: -1, Hard: -1}},
	}
}

func TestAssessHealthy(t *testing.T) {
	r := healthy()
	assess(&r)
	if r.Degraded || r.NextSteps == nil || len(r.NextSteps) != 0 {
		t.Fatalf("degraded %v steps %q", r.Degraded, r.NextSteps)
	}
}

func TestAssessDegraded(t *testing.T) {
	r := healthy()
	r.Shm.FreeBytes = 1 << 20
	r.Shm.Stale = []string{"/dev/shm/goshmem-x-0", "/dev/shm/goshmem-x-1"}
	r.Listen = ListenReport{Error: "no usable interface"}
	r.Limits.NoFile.Soft = 1024
	assess(&r)
	if !r.Degraded || len(r.NextSteps) != 4 {
		t.Fatalf("degraded %v steps %q", r.Degraded, r.NextSteps)
	}
	for i, want := range []string{"only 1.0 MiB free in /dev/shm", "2 stale goshmem segment(s)", "SHMEM_UID_SOCK_IFNAME", "ulimit -n 4096"} {
		if !strings.Contains(r.NextSteps[i], want) {
			t.Errorf("step %d %q lacks %q", i, r.NextSteps[i], want)
		}
	}
	if !strings.Contains(r.NextSteps[1], "shmem-config --reap") {
		t.Errorf("stale step does not suggest --reap: %q", r.NextSteps[1])
	}

	r = healthy()
	r.Shm.Error = "statfs: no such file"
	r.RDMA = RDMAReport{Present: true, Devices: []string{"mlx5_0"}}
	r.Limits.MemLock.Soft = 8 << 20
	assess(&r)
	if !r.Degraded || len(r.NextSteps) != 3 || !strings.Contains(r.NextSteps[0], "--network") ||
		!strings.Contains(r.NextSteps[1], "8.0 MiB") || !strings.Contains(r.NextSteps[2], "UCX") {
		t.Fatalf("degraded %v steps %q", r.Degraded, r.NextSteps)
	}
}

func TestBytesStr(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 64 << 20: "64.0 MiB", 3 << 30: "3.0 GiB"} {
		if got := bytesStr(n); got != want {
			t.Errorf("bytesStr(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestDiagnoseReal runs --diagnose on this host and checks the JSON.
func TestDiagnoseReal(t *testing.T) {
	var out, errb bytes.Buffer
	if st := run([]string{"--diagnose"}, &out, &errb); st != 0 {
		t.Fatalf("status %d: %s", st, errb.String())
	}
	var m map[string]any
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.String())
	}
	for _, k := range []string{"version", "spec_version", "go_version", "cores", "shared_memory", "listen", "ucx", "rdma", "libfabric", "tls", "limits", "degraded", "next_steps"} {
		if _, ok := m[k]; !ok {
			t.Errorf("key %q missing", k)
		}
	}
	shm := m["shared_memory"].(map[string]any)
	for _, k := range []string{"total_bytes", "free_bytes", "stale_segments"} {
		if _, ok := shm[k]; !ok {
			t.Errorf("shared_memory.%s missing", k)
		}
	}
	if m["version"] != shmem.Version || m["spec_version"] != "1.5" {
		t.Errorf("versions %v %v", m["version"], m["spec_version"])
	}
	if _, ok := m["degraded"].(bool); !ok {
		t.Errorf("degraded is %T", m["degraded"])
	}
}

func TestVersionEnvUsage(t *testing.T) {
	var out bytes.Buffer
	if st := run([]string{"--version"}, &out, &out); st != 0 || !strings.HasPrefix(out.String(), "goshmem "+shmem.Version+" (OpenSHMEM 1.5, go") {
		t.Fatalf("status %d output %q", st, out.String())
	}
	out.Reset()
	if st := run([]string{"--env"}, &out, &out); st != 0 || out.String() != bootstrap.EnvTable {
		t.Fatalf("--env: status %d", st)
	}
	for _, bad := range [][]string{nil, {"--bogus"}, {"--version", "extra"}} {
		if st := run(bad, &out, &out); st != 2 {
			t.Errorf("run(%q) = %d, want 2", bad, st)
		}
	}
}

// TestReap leaves a segment of a dead process and checks that --diagnose
// reports it, suggests --reap, and --reap removes it.
func TestReap(t *testing.T) {
	job := fmt.Sprintf("cfgtest%d", os.Getpid())
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GOSHMEM_TEST_STALE="+job)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("making a stale segment: %v\n%s", err, out)
	}
	t.Cleanup(func() { udma.Reap(job) })
	name := udma.Dir + "/goshmem-" + job + "-0"
	var out bytes.Buffer
	if st := run([]string{"--diagnose"}, &out, &out); st != 0 {
		t.Fatal(out.String())
	}
	var r Report
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(r.Shm.Stale, name) || !r.Degraded || !slices.ContainsFunc(r.NextSteps, func(s string) bool { return strings.Contains(s, "--reap") }) {
		t.Fatalf("stale %q degraded %v steps %q", r.Shm.Stale, r.Degraded, r.NextSteps)
	}
	out.Reset()
	if st := run([]string{"--reap"}, &out, &out); st != 0 || !strings.HasPrefix(out.String(), "removed ") {
		t.Fatalf("--reap: %d %q", st, out.String())
	}
	if segs, err := udma.List(job); err != nil || len(segs) != 0 {
		t.Fatalf("after --reap: %v %v", segs, err)
	}
}
