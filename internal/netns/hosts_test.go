package netns_test

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/internal/netns"
)

// peBinary is what PE processes run: this test binary itself, so the PEs
// run with the race detector whenever the tests do.
var peBinary = os.Args[0]

func TestMain(m *testing.M) {
	if role := os.Getenv("GOSHMEM_NETNS_ROLE"); role != "" {
		os.Exit(runRole(role))
	}
	os.Exit(m.Run())
}

// detectBound is the generous bound on noticing a failure: memberlist's
// suspicion and the control lane's heartbeat silence both take a few
// seconds.
const detectBound = 20 * time.Second

// procTimeout ends a PE process that hangs; the test then fails.
const procTimeout = 60 * time.Second

const gossipPort = "7946"

// proc is one PE process running in a host.
type proc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	mu    sync.Mutex
	out   bytes.Buffer
	ready chan struct{}
	done  chan struct{}
	code  int
}

func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// launch describes how a world's PEs start.
type launch struct {
	net    *netns.Net
	hosts  []int // hosts[r] runs rank r
	role   string
	gossip bool   // form by gossip (seed: rank 0's host), else unique-ID file
	uidDir string // where rank 0 writes the unique ID
	env    []string
}

func newLaunch(t *testing.T, n *netns.Net, hosts []int, role string, gossip bool, env ...string) *launch {
	return &launch{net: n, hosts: hosts, role: role, gossip: gossip, uidDir: t.TempDir(), env: env}
}

func (l *launch) uidFile() string { return filepath.Join(l.uidDir, "uid") }

// rankEnv is the environment of rank r, as a launcher would give it.
func (l *launch) rankEnv(r int) []string {
	h := l.net.Hosts[l.hosts[r]]
	env := append(os.Environ(), "GOSHMEM_NETNS_ROLE="+l.role,
		"SHMEM_RANK="+strconv.Itoa(r), "SHMEM_NPES="+strconv.Itoa(len(l.hosts)),
		"SHMEM_HOST_ID=host"+strconv.Itoa(l.hosts[r]), "SHMEM_SYMMETRIC_SIZE=8m")
	switch {
	case l.gossip:
		seed := l.net.Hosts[l.hosts[0]].Addr() + ":" + gossipPort
		env = append(env, "TEST_SEEDS="+seed, "SHMEM_JOB_SECRET=netns-test-secret",
			"SHMEM_GOSSIP_ADDR="+h.Addr()+":"+gossipPort, "SHMEM_UID_SOCK_IFNAME=eth0")
	case r == 0:
		env = append(env, "SHMEM_UID_FILE="+l.uidFile(), "SHMEM_UID_SESSION_ID="+h.Addr()+":0")
	default:
		env = append(env, "SHMEM_UID_FILE="+l.uidFile(), "SHMEM_UID_SOCK_IFNAME=eth0")
	}
	return append(env, l.env...)
}

// start runs rank r.
func (l *launch) start(t *testing.T, r int) *proc {
	return startProc(t, l.net, l.hosts[r], l.rankEnv(r))
}

// startAll runs every rank.
func (l *launch) startAll(t *testing.T) []*proc {
	ps := make([]*proc, len(l.hosts))
	for r := range ps {
		ps[r] = l.start(t, r)
	}
	return ps
}

func startProc(t *testing.T, n *netns.Net, host int, env []string) *proc {
	t.Helper()
	p := &proc{cmd: n.Command(host, peBinary, "-test.run=^$"), ready: make(chan struct{}), done: make(chan struct{})}
	p.cmd.Env = env
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stderr = p.cmd.Stdout
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		readied := false
		for sc.Scan() {
			p.mu.Lock()
			p.out.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			if !readied && sc.Text() == "READY" {
				readied = true
				close(p.ready)
			}
		}
	}()
	go func() {
		timer := time.AfterFunc(procTimeout, func() { _ = p.cmd.Process.Kill() })
		<-copied
		_ = p.cmd.Wait()
		timer.Stop()
		p.code = p.cmd.ProcessState.ExitCode()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

// wait returns the exit code, failing the test if the process outlives d.
func (p *proc) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		return p.code
	case <-time.After(d):
		t.Errorf("PE process %d still running after %v; output:\n%s", p.cmd.Process.Pid, d, p.output())
		_ = p.cmd.Process.Kill()
		<-p.done
		return -1
	}
}

// awaitReady waits for every process to print READY.
func awaitReady(t *testing.T, ps []*proc) {
	t.Helper()
	for r, p := range ps {
		select {
		case <-p.ready:
		case <-p.done:
			t.Fatalf("PE %d exited %d before it was ready:\n%s", r, p.code, p.output())
		case <-time.After(procTimeout):
			t.Fatalf("PE %d not ready:\n%s", r, p.output())
		}
	}
}

func expectCodes(t *testing.T, ps []*proc, want int) {
	t.Helper()
	for r, p := range ps {
		if c := p.wait(t, procTimeout); c != want {
			t.Errorf("PE %d exited %d, want %d; output:\n%s", r, c, want, p.output())
		}
	}
}

// failedAt reads when a PE saw the failure, and the error it saw, from
// the FAILED line it printed.
func failedAt(t *testing.T, p *proc) (time.Time, string) {
	t.Helper()
	for _, line := range strings.Split(p.output(), "\n") {
		if rest, ok := strings.CutPrefix(line, "FAILED "); ok {
			ns, msg, _ := strings.Cut(rest, ":")
			if v, err := strconv.ParseInt(ns, 10, 64); err == nil {
				return time.Unix(0, v), strings.TrimSpace(msg)
			}
		}
	}
	t.Errorf("no FAILED line in:\n%s", p.output())
	return time.Time{}, ""
}

// parseUIDAddr returns the host:port a unique ID's String names.
func parseUIDAddr(s string) (string, error) {
	uid, err := shmem.ParseUniqueID(s)
	if err != nil {
		return "", err
	}
	return uid.Addr, nil
}
