package main

import (
	"encoding/csv"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goshmem/shmem/bootstrap"
	"github.com/goshmem/shmem/internal/launch"
	"github.com/goshmem/shmem/internal/launch/launchtest"
)

// freeAddr is a loopback address with a port nothing listens on now, so
// the test needs no fixed port (CANN SHMEM's 8899 may be taken). The port
// is below the kernel's ephemeral range (bootstrap.FreePort): rank 0 binds
// it only after run.sh has built the program and every PE has started, and
// a port from that range (a released port-0 listener's) can meanwhile be
// handed to any socket on port 0 or to a connect, another test's or a PE's
// own listener (a CI run failed so at 8 PEs).
func freeAddr(t *testing.T) string {
	port, err := bootstrap.FreePort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}

// runScript runs run.sh as CANN SHMEM's users do, with env added to a
// copy of this environment cleared of every launch and TLS variable. Its
// outputs go to a directory of the test's (-workdir), returned, so that
// two runs of one checkout at once do not share golden/ and result.csv.
func runScript(t *testing.T, env []string, args ...string) (string, string, error) {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("./run.sh", append(args, "-workdir", dir)...)
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "SHMEM_") || strings.HasPrefix(k, "SMEM_") || k == "RANK" || k == "WORLD_SIZE" || strings.HasPrefix(k, "MASTER_") {
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	cmd.Env = append(cmd.Env, env...)
	if launchtest.RaceEnabled {
		// run.sh builds the PE program with go build, which reads GOFLAGS:
		// under -race the PEs it starts are race-built too.
		cmd.Env = append(cmd.Env, "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -race"))
	}
	out, err := cmd.CombinedOutput()
	return string(out), dir, err
}

// checkCSV asserts that PE 0 wrote one row per size for n PEs into
// dir/result.csv.
func checkCSV(t *testing.T, dir string, n int) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "result.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) < 2 || strings.Join(rows[0], ",") != "M,N,Time(us)" {
		t.Fatalf("result.csv: %v", rows)
	}
	for _, r := range rows[1:] {
		if r[1] != strconv.Itoa(n) {
			t.Errorf("result.csv row %v: N is not %d", r, n)
		}
	}
	if rows[1][0] != "16" {
		t.Errorf("result.csv first M = %s, want 16", rows[1][0])
	}
}

// The run.sh flow with TLS on (a shared secret): every type at 2, 4 and 8
// PEs gathers the golden data.
func TestRunScriptTypesAndSizes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 42 processes")
	}
	for _, n := range []int{2, 4, 8} {
		for _, typ := range []string{"int32_t", "float16_t", "bfloat16_t"} {
			out, dir, err := runScript(t, []string{"SHMEM_JOB_SECRET=allgather-test"},
				"-pes", strconv.Itoa(n), "-type", typ, "-iters", "11", "-ipport", "tcp://"+freeAddr(t))
			if err != nil {
				t.Fatalf("%s, %d PEs: %v\n%s", typ, n, err, out)
			}
			want := "all results match the golden data (" + strings.TrimSuffix(typ, "_t") + ", " + strconv.Itoa(n) + " PEs)"
			if !strings.Contains(out, want) {
				t.Fatalf("%s, %d PEs: output lacks %q:\n%s", typ, n, want, out)
			}
			checkCSV(t, dir, n)
		}
	}
}

// TLS off only by the user's word, CANN SHMEM's switch.
func TestRunScriptTLSOffBySwitch(t *testing.T) {
	out, dir, err := runScript(t, []string{"SMEM_CONF_STORE_TLS_ENABLE=0"}, "-pes", "2", "-iters", "11", "-ipport", "tcp://"+freeAddr(t))
	if err != nil || !strings.Contains(out, "TLS is off") || !strings.Contains(out, "all results match") {
		t.Fatalf("TLS off: %v\n%s", err, out)
	}
	checkCSV(t, dir, 2)
}

// With neither a secret nor the switch every process refuses to start and
// says what to set.
func TestRunScriptNeedsSecretOrSwitch(t *testing.T) {
	out, _, err := runScript(t, nil, "-pes", "2", "-iters", "11", "-ipport", "tcp://"+freeAddr(t))
	if err == nil {
		t.Fatalf("run.sh succeeded without a secret or TLS switch:\n%s", out)
	}
	for _, want := range []string{"rank 0 of 2", "rank 1 of 2", "set SHMEM_JOB_SECRET", "SMEM_CONF_STORE_TLS_ENABLE=0"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// CANN SHMEM's binary arguments without run.sh: -ipport, -rank, -fpe,
// -gnpus, one process per PE, with ranks given by -fpe as two "hosts".
// The processes are started by the one launcher library, without rank or
// size in their environment: the flags alone place each PE.
func TestIPPortFlags(t *testing.T) {
	bin, err := launchtest.BuildLauncher(t.TempDir(), "github.com/goshmem/shmem/examples/allgather")
	if err != nil {
		t.Fatal(err)
	}
	addr := "tcp://" + freeAddr(t)
	dir := t.TempDir()
	const npes, gnpus = 4, 2
	j, err := launch.Start(launch.Config{Program: bin, NPEs: npes, NoRank: true, Capture: true, Timeout: 5 * time.Minute,
		Env: append(os.Environ(), "SHMEM_JOB_SECRET=flags-test"),
		Command: func(rank int, name string, _ ...string) *exec.Cmd {
			fpe, idx := rank/gnpus*gnpus, rank%gnpus // host rank/gnpus, its GPU idx
			return exec.Command(name, "-ipport", addr, "-pes", strconv.Itoa(npes), "-gnpus", strconv.Itoa(gnpus),
				"-fpe", strconv.Itoa(fpe), "-rank", strconv.Itoa(idx), "-type", "bfloat16_t", "-iters", "11", "-out", dir+"/result.csv")
		}})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Wait().Err(); err != nil {
		for _, p := range j.Procs() {
			t.Logf("PE %d (%v):\n%s", p.Rank(), p.End(), p.Output())
		}
		t.Fatal(err)
	}
	if out := j.PE(0).Output(); !strings.Contains(out, "all results match the golden data (bfloat16, 4 PEs)") {
		t.Errorf("PE 0's output: %s", out)
	}
}
