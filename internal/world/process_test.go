package world_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goshmem/shmem/bootstrap"
	"github.com/goshmem/shmem/internal/launch"
	lt "github.com/goshmem/shmem/internal/launch/launchtest"
	"github.com/goshmem/shmem/transport/udma"
)

// peBinary is the test PE program (internal/launch/testpe), built once per
// test run (with -race when the tests have it).
var peBinary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "goshmem-testpe")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if peBinary, err = lt.BuildPE(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// TestProcessesGlobalExit: one PE ends the world with GlobalExit(42)
// while the others read from it or wait in a barrier, over the network
// path with and without TLS: the notice travels on the control lane,
// and every process exits with 42, none reporting a failure.
func TestProcessesGlobalExit(t *testing.T) {
	for _, tlsEnv := range []string{"TEST_NO_TLS=0", "TEST_NO_TLS=1"} {
		t.Run(tlsEnv, func(t *testing.T) {
			codes, outs := world(t, 4, lt.RoleExit, "SHMEM_TRANSPORT=tcp", lt.EnvWho+"=2", tlsEnv)
			expectAll(t, codes, outs, lt.GlobalExitStatus)
		})
	}
}

// world starts n PEs of role and returns their exit codes and output.
func world(t *testing.T, n int, role string, env ...string) ([]int, []string) {
	t.Helper()
	return worldOf(t, peBinary, n, role, env...)
}

// worldOf is world with the PE program bin.
func worldOf(t *testing.T, bin string, n int, role string, env ...string) ([]int, []string) {
	t.Helper()
	return worldOfEnv(t, bin, n, role, func(int) []string { return env })
}

// worldOfEnv is worldOf with PE r's environment envOf(r), formed by a
// unique ID on loopback (without TLS when PE 0's environment says
// lt.EnvNoTLS=1).
func worldOfEnv(t *testing.T, bin string, n int, role string, envOf func(r int) []string) ([]int, []string) {
	t.Helper()
	uid := lt.LoopbackUID(t, slices.Contains(envOf(0), lt.EnvNoTLS+"=1"))
	codes, outs := runPEsOf(t, bin, launch.Config{NPEs: n, UniqueID: uid.String(), RankEnv: func(r int) []string {
		return append([]string{lt.EnvRole + "=" + role, "SHMEM_SYMMETRIC_SIZE=8m"}, envOf(r)...)
	}})
	left, _ := udma.List(uid.JobName())
	if len(left) != 0 {
		t.Errorf("segments left in /dev/shm: %v", left)
	}
	return codes, outs
}

// procTimeout ends a job that hangs, so the test fails instead of stalling.
const procTimeout = 90 * time.Second

// runPEsOf runs the job cfg describes with the PE program bin and returns
// every PE's exit code and output.
func runPEsOf(t *testing.T, bin string, cfg launch.Config) ([]int, []string) {
	t.Helper()
	cfg.Program, cfg.Capture, cfg.Timeout, cfg.QuitOnTimeout = bin, true, procTimeout, true
	j, err := launch.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	res := j.Wait()
	if res.TimedOut {
		t.Errorf("PEs still running after %v were killed", procTimeout)
	}
	codes, outs := make([]int, cfg.NPEs), make([]string, cfg.NPEs)
	for r, e := range res.Ends {
		codes[r], outs[r] = e.Code, j.PE(r).Output()
	}
	return codes, outs
}

func expectAll(t *testing.T, codes []int, outs []string, want int) {
	t.Helper()
	for r, c := range codes {
		if c != want {
			t.Errorf("PE %d exited %d, want %d; output:\n%s", r, c, want, outs[r])
		}
	}
}

func TestProcessesSharedMemory(t *testing.T) {
	codes, outs := world(t, 3, lt.RoleSPMD)
	expectAll(t, codes, outs, 0)
}

func TestProcessesNetworkTLS(t *testing.T) {
	codes, outs := world(t, 3, lt.RoleSPMD, "SHMEM_TRANSPORT=tcp")
	expectAll(t, codes, outs, 0)
}

func TestProcessesNetworkWithoutTLS(t *testing.T) {
	codes, outs := world(t, 2, lt.RoleSPMD, "SHMEM_TRANSPORT=tcp", lt.EnvNoTLS+"=1")
	expectAll(t, codes, outs, 0)
}

func TestProcessFailureIsReported(t *testing.T) {
	t.Run("shm", func(t *testing.T) { processFailureIsReported(t) })
	t.Run("tcp", func(t *testing.T) { processFailureIsReported(t, "SHMEM_TRANSPORT=tcp") })
}

func processFailureIsReported(t *testing.T, env ...string) {
	codes, outs := world(t, 3, lt.RoleDie, env...)
	if codes[2] != lt.DieStatus {
		t.Errorf("the dying PE exited %d, want %d:\n%s", codes[2], lt.DieStatus, outs[2])
	}
	// Every survivor fails with ErrPEFailed. The first to notice names
	// PE 2; a survivor may instead notice the other survivor leaving.
	named := false
	for r := 0; r < 2; r++ {
		if codes[r] != lt.ExitPEFailed {
			t.Errorf("survivor PE %d exited %d, want %d (ErrPEFailed, clean Finalize); output:\n%s", r, codes[r], lt.ExitPEFailed, outs[r])
		}
		named = named || strings.Contains(outs[r], "PE 2")
	}
	if !named {
		t.Errorf("no survivor named PE 2:\n%s\n%s", outs[0], outs[1])
	}
	// Each survivor's failure handler named PE 2 (the role waits for it).
	for r := 0; r < 2; r++ {
		if !strings.Contains(outs[r], "OnFailure: PE 2: ") {
			t.Errorf("survivor PE %d's failure handler did not name PE 2:\n%s", r, outs[r])
		}
	}
}

// gossipWorld starts n PEs of role that form their world by gossip on
// loopback, with no rank from the launcher: PE 0's process is the seed, the
// others join through it.
func gossipWorld(t *testing.T, n int, role string) ([]int, []string) {
	t.Helper()
	return gossipWorldOf(t, n, role, true)
}

// gossipWorldOf is gossipWorld; with noRank false the launcher gives each
// process its rank, which gossip takes as a hint, so that process r is PE r.
func gossipWorldOf(t *testing.T, n int, role string, noRank bool) ([]int, []string) {
	t.Helper()
	seed := freeLoopbackAddr(t)
	return runPEsOf(t, peBinary, launch.Config{NPEs: n, NoRank: noRank,
		Secret: "gossip-test-" + strconv.Itoa(os.Getpid()),
		RankEnv: func(r int) []string {
			bind := "127.0.0.1:0"
			if r == 0 {
				bind = seed
			}
			return []string{lt.EnvRole + "=" + role, lt.EnvSeeds + "=" + seed,
				lt.EnvGossipNPEs + "=" + strconv.Itoa(n), "SHMEM_GOSSIP_ADDR=" + bind, "SHMEM_SYMMETRIC_SIZE=8m"}
		}})
}

func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	// memberlist binds the port for TCP and UDP; a TCP port free now is
	// almost always free for both a moment later. Below the ephemeral
	// range (bootstrap.FreePort), so that no socket on port 0 or connect,
	// the other PEs' listeners among them, takes it before the seed binds.
	port, err := bootstrap.FreePort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}

func TestProcessesGossip(t *testing.T) {
	codes, outs := gossipWorld(t, 3, lt.RoleSPMD)
	expectAll(t, codes, outs, 0)
}

func TestProcessesWithPEMCertificates(t *testing.T) {
	dir := t.TempDir()
	writePKI(t, dir)
	codes, outs := world(t, 2, lt.RoleSPMD, "SHMEM_TRANSPORT=tcp", lt.EnvTLSPEM+"="+dir)
	expectAll(t, codes, outs, 0)
}

// writePKI writes a CA and one certificate for every PE (named goshmem,
// as LoadTLS requires) into dir.
func writePKI(t *testing.T, dir string) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "pe"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), DNSNames: []string{"goshmem"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	ca, _ := x509.ParseCertificate(caDER)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	for name, block := range map[string]*pem.Block{
		"ca.pem": {Type: "CERTIFICATE", Bytes: caDER}, "pe.pem": {Type: "CERTIFICATE", Bytes: der},
		"pe.key": {Type: "PRIVATE KEY", Bytes: keyDER},
	} {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestProcessesRelayPolicy forbids the direct path between PEs 0 and 2
// (SHMEM_RELAY_VIA): their traffic goes through PE 1, over shared memory
// and over the network.
func TestProcessesRelayPolicy(t *testing.T) {
	t.Run("shm", func(t *testing.T) {
		codes, outs := world(t, 3, lt.RoleSPMD, "SHMEM_RELAY_VIA=0-2:1", "SHMEM_LOG_LEVEL=info")
		expectAll(t, codes, outs, 0)
		expectRelay(t, outs[0], 2, 1)
	})
	t.Run("tcp", func(t *testing.T) {
		codes, outs := world(t, 4, lt.RoleSPMD, "SHMEM_RELAY_VIA=0-2:1,1-3:2", "SHMEM_TRANSPORT=tcp", "SHMEM_LOG_LEVEL=info")
		expectAll(t, codes, outs, 0)
		expectRelay(t, outs[3], 1, 2)
	})
}

func expectRelay(t *testing.T, out string, peer, via int) {
	t.Helper()
	if !strings.Contains(out, fmt.Sprintf("peer=%d via=%d", peer, via)) {
		t.Errorf("no relay to PE %d via PE %d logged:\n%s", peer, via, out)
	}
}

// TestOversubscribedBarriers runs 8 PE processes on this machine's cores
// (2 in CI): a wait that does not yield would starve the PE it waits for.
func TestOversubscribedBarriers(t *testing.T) {
	codes, outs := world(t, 8, lt.RoleBarriers)
	expectAll(t, codes, outs, 0)
}

// TestProcessLauncherGone: a PE whose launcher is no longer its ancestor
// (here a live process that never was one, as a reused pid would be)
// refuses to start, saying so, instead of running orphaned.
func TestProcessLauncherGone(t *testing.T) {
	other := exec.Command("sleep", "3600")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = other.Process.Kill()
		_ = other.Wait()
	}()
	codes, outs := world(t, 1, lt.RoleSPMD, "SHMEM_LAUNCHER_PID="+strconv.Itoa(other.Process.Pid))
	if codes[0] != lt.ExitInitFailed || !strings.Contains(outs[0], "is gone") || !strings.Contains(outs[0], "bootstrap failed") {
		t.Fatalf("PE exited %d, want %d (Init refused: launcher gone, ErrBootstrap); output:\n%s", codes[0], lt.ExitInitFailed, outs[0])
	}
}

// TestProcessCoordinatorDies: rank 0, which runs the agreement
// coordinator, dies while the others allocate and free in a loop: every
// survivor ends with ErrPEFailed naming PE 0 (not ErrTimeout after the
// agreement bound), and finalizes cleanly.
func TestProcessCoordinatorDies(t *testing.T) {
	for _, transport := range []string{"SHMEM_TRANSPORT=", "SHMEM_TRANSPORT=tcp"} {
		t.Run(transport, func(t *testing.T) {
			codes, outs := world(t, 3, lt.RoleDieAlloc, lt.EnvWho+"=0", transport)
			if codes[0] != lt.DieStatus {
				t.Errorf("PE 0 exited %d, want %d:\n%s", codes[0], lt.DieStatus, outs[0])
			}
			for r := 1; r < 3; r++ {
				if codes[r] != lt.ExitPEFailed || !strings.Contains(outs[r], "PE 0") {
					t.Errorf("survivor PE %d exited %d, want %d naming PE 0; output:\n%s", r, codes[r], lt.ExitPEFailed, outs[r])
				}
			}
		})
	}
}

// A heap that grows across processes: spmdcheck.Grow on 512 KiB heaps
// that may grow to 8 MiB, over shared memory and over TCP.
func TestProcessesHeapGrows(t *testing.T) {
	for _, transport := range []string{"shm", "tcp"} {
		t.Run(transport, func(t *testing.T) {
			env := []string{"SHMEM_SYMMETRIC_SIZE=512k", "SHMEM_SYMMETRIC_SIZE_MAX=8m"}
			if transport == "tcp" {
				env = append(env, "SHMEM_TRANSPORT=tcp")
			}
			codes, outs := world(t, 2, lt.RoleGrow, env...)
			expectAll(t, codes, outs, 0)
		})
	}
}
