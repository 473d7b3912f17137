package world_test

import (
	"bytes"
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
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/transport/udma"
)

// peBinary is the PE program (internal/testpe), built once per test run.
var peBinary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "goshmem-testpe")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	peBinary = filepath.Join(dir, "testpe")
	build := exec.Command("go", goBuild("-o", peBinary, "./internal/testpe")...)
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the PE program: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// goBuild returns the arguments of a go build of args, with -race when
// the tests run with it.
func goBuild(args ...string) []string {
	if raceEnabled {
		args = append([]string{"-race"}, args...)
	}
	return append([]string{"build"}, args...)
}

// TestProcessesGlobalExit: one PE ends the world with GlobalExit(42)
// while the others read from it or wait in a barrier, over the network
// path with and without TLS: the notice travels on the control lane,
// and every process exits with 42, none reporting a failure.
func TestProcessesGlobalExit(t *testing.T) {
	for _, tlsEnv := range []string{"TEST_NO_TLS=0", "TEST_NO_TLS=1"} {
		t.Run(tlsEnv, func(t *testing.T) {
			codes, outs := world(t, 4, "exit", "SHMEM_TRANSPORT=tcp", "TEST_EXITER=2", tlsEnv)
			expectAll(t, codes, outs, 42)
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

// worldOfEnv is worldOf with PE r's environment envOf(r).
func worldOfEnv(t *testing.T, bin string, n int, role string, envOf func(r int) []string) ([]int, []string) {
	t.Helper()
	t.Setenv("SHMEM_UID_SESSION_ID", "127.0.0.1:0")
	var opts []shmem.Option
	for _, e := range envOf(0) {
		if e == "TEST_NO_TLS=1" {
			opts = append(opts, shmem.WithoutTLS())
		}
	}
	uid, err := shmem.GetUniqueID(opts...)
	if err != nil {
		t.Fatal(err)
	}
	codes, outs := runPEsOf(t, bin, n, func(r int) []string {
		return append([]string{"GOSHMEM_TEST_ROLE=" + role, "SHMEM_RANK=" + strconv.Itoa(r),
			"SHMEM_NPES=" + strconv.Itoa(n), "SHMEM_UNIQUE_ID=" + uid.String(), "SHMEM_SYMMETRIC_SIZE=8m"}, envOf(r)...)
	})
	left, _ := udma.List(uid.JobName())
	if len(left) != 0 {
		t.Errorf("segments left in /dev/shm: %v", left)
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
	codes, outs := world(t, 3, "spmd")
	expectAll(t, codes, outs, 0)
}

func TestProcessesNetworkTLS(t *testing.T) {
	codes, outs := world(t, 3, "spmd", "SHMEM_TRANSPORT=tcp")
	expectAll(t, codes, outs, 0)
}

func TestProcessesNetworkWithoutTLS(t *testing.T) {
	codes, outs := world(t, 2, "spmd", "SHMEM_TRANSPORT=tcp", "TEST_NO_TLS=1")
	expectAll(t, codes, outs, 0)
}

func TestProcessFailureIsReported(t *testing.T) {
	codes, outs := world(t, 3, "die")
	if codes[2] != 7 {
		t.Errorf("the dying PE exited %d, want 7:\n%s", codes[2], outs[2])
	}
	// Every survivor fails with ErrPEFailed. The first to notice names
	// PE 2; a survivor may instead notice the other survivor leaving.
	named := false
	for r := 0; r < 2; r++ {
		if codes[r] != 3 {
			t.Errorf("survivor PE %d exited %d, want 3 (ErrPEFailed); output:\n%s", r, codes[r], outs[r])
		}
		named = named || strings.Contains(outs[r], "PE 2")
	}
	if !named {
		t.Errorf("no survivor named PE 2:\n%s\n%s", outs[0], outs[1])
	}
}

// gossipWorld starts n PEs of role that form their world by gossip on
// loopback: PE 0's process is the seed, the others join through it.
func gossipWorld(t *testing.T, n int, role string) ([]int, []string) {
	t.Helper()
	seed := freeLoopbackAddr(t)
	return runPEs(t, n, func(r int) []string {
		bind := "127.0.0.1:0"
		if r == 0 {
			bind = seed
		}
		return []string{"GOSHMEM_TEST_ROLE=" + role, "TEST_GOSSIP_SEEDS=" + seed,
			"TEST_GOSSIP_NPES=" + strconv.Itoa(n), "SHMEM_GOSSIP_ADDR=" + bind,
			"SHMEM_JOB_SECRET=gossip-test-" + strconv.Itoa(os.Getpid()), "SHMEM_SYMMETRIC_SIZE=8m"}
	})
}

// runPEs runs n PE processes, PE r with the environment envOf(r) added,
// and returns their exit codes and output. A PE still running after 90 s
// is killed, so a hang fails the test instead of stalling it.
func runPEs(t *testing.T, n int, envOf func(r int) []string) ([]int, []string) {
	t.Helper()
	return runPEsOf(t, peBinary, n, envOf)
}

// runPEsOf is runPEs with the PE program bin.
func runPEsOf(t *testing.T, bin string, n int, envOf func(r int) []string) ([]int, []string) {
	t.Helper()
	codes, outs := make([]int, n), make([]string, n)
	var wg sync.WaitGroup
	for r := 0; r < n; r++ {
		cmd := exec.Command(bin)
		cmd.Env = append(os.Environ(), envOf(r)...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			timer := time.AfterFunc(90*time.Second, func() { _ = cmd.Process.Kill() })
			defer timer.Stop()
			_ = cmd.Wait()
			codes[r], outs[r] = cmd.ProcessState.ExitCode(), out.String()
		}()
	}
	wg.Wait()
	return codes, outs
}

func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// memberlist binds the port for TCP and UDP; a TCP port free now is
	// almost always free for both a moment later.
	return ln.Addr().String()
}

func TestProcessesGossip(t *testing.T) {
	codes, outs := gossipWorld(t, 3, "spmd")
	expectAll(t, codes, outs, 0)
}

func TestProcessesWithPEMCertificates(t *testing.T) {
	dir := t.TempDir()
	writePKI(t, dir)
	codes, outs := world(t, 2, "spmd", "SHMEM_TRANSPORT=tcp", "TEST_TLS_PEM="+dir)
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
		codes, outs := world(t, 3, "spmd", "SHMEM_RELAY_VIA=0-2:1", "SHMEM_LOG_LEVEL=info")
		expectAll(t, codes, outs, 0)
		expectRelay(t, outs[0], 2, 1)
	})
	t.Run("tcp", func(t *testing.T) {
		codes, outs := world(t, 4, "spmd", "SHMEM_RELAY_VIA=0-2:1,1-3:2", "SHMEM_TRANSPORT=tcp", "SHMEM_LOG_LEVEL=info")
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
	codes, outs := world(t, 8, "barriers")
	expectAll(t, codes, outs, 0)
}
