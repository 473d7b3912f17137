package netns_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/internal/launch"
	lt "github.com/goshmem/shmem/internal/launch/launchtest"
	"github.com/goshmem/shmem/internal/netns"
)

// peBinary is the test PE program (internal/launch/testpe) that runs in
// the hosts, built by TestMain when namespaces can be made here (with
// -race when the tests have it).
var peBinary string

func TestMain(m *testing.M) {
	var dir string
	if netns.Available() == "" {
		var err error
		if dir, err = os.MkdirTemp("", "goshmem-netns"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if peBinary, err = lt.BuildPE(dir); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	if dir != "" {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

// detectBound is the generous bound on noticing a failure: memberlist's
// suspicion and gRPC keepalive both take a few seconds.
const detectBound = 20 * time.Second

// procTimeout ends a PE process that hangs; the test then fails.
const procTimeout = 60 * time.Second

const gossipPort = "7946"

// proc is one PE process running in a host; ready closes when it prints
// its READY line.
type proc struct {
	*launch.Proc
	ready chan struct{}
}

// hostsWorld describes how a world's PEs start in the hosts of a Net.
type hostsWorld struct {
	net    *netns.Net
	hosts  []int // hosts[r] runs rank r
	role   string
	gossip bool   // form by gossip (seed: rank 0's host), else unique-ID file
	uidDir string // where rank 0 writes the unique ID
	env    []string
}

func newWorld(t *testing.T, n *netns.Net, hosts []int, role string, gossip bool, env ...string) *hostsWorld {
	return &hostsWorld{net: n, hosts: hosts, role: role, gossip: gossip, uidDir: t.TempDir(), env: env}
}

func (l *hostsWorld) uidFile() string { return filepath.Join(l.uidDir, "uid") }

// rankEnv is what rank r gets beside the launch's own variables: the role,
// the rendezvous of its kind, the world's env, then extra.
func (l *hostsWorld) rankEnv(r int, extra []string) []string {
	h := l.net.Hosts[l.hosts[r]]
	env := []string{lt.EnvRole + "=" + l.role, lt.EnvCheckLeaks + "=1", lt.EnvInitTimeout + "=30s",
		"SHMEM_SYMMETRIC_SIZE=8m"}
	switch {
	case l.gossip:
		seed := l.net.Hosts[l.hosts[0]].Addr() + ":" + gossipPort
		env = append(env, lt.EnvSeeds+"="+seed, "SHMEM_JOB_SECRET=netns-test-secret",
			"SHMEM_GOSSIP_ADDR="+h.Addr()+":"+gossipPort, "SHMEM_UID_SOCK_IFNAME=eth0")
	case r == 0:
		env = append(env, "SHMEM_UID_FILE="+l.uidFile(), "SHMEM_UID_SESSION_ID="+h.Addr()+":0")
	default:
		env = append(env, "SHMEM_UID_FILE="+l.uidFile(), "SHMEM_UID_SOCK_IFNAME=eth0")
	}
	return append(append(env, l.env...), extra...)
}

// start runs rank r, with extra added to its environment.
func (l *hostsWorld) start(t *testing.T, r int, extra ...string) *proc {
	return l.run(t, []int{r}, extra)[0]
}

// startAll runs every rank.
func (l *hostsWorld) startAll(t *testing.T) []*proc {
	return l.run(t, nil, nil)
}

// run starts ranks (nil: all) as one launch, each in its host.
func (l *hostsWorld) run(t *testing.T, ranks []int, extra []string) []*proc {
	t.Helper()
	ready := make([]chan struct{}, len(l.hosts))
	once := make([]sync.Once, len(l.hosts))
	for r := range ready {
		ready[r] = make(chan struct{})
	}
	j, err := launch.Start(launch.Config{
		Program: peBinary, NPEs: len(l.hosts), Ranks: ranks, Hosts: l.hosts,
		RankEnv: func(r int) []string { return l.rankEnv(r, extra) },
		Command: func(r int, name string, args ...string) *exec.Cmd {
			return l.net.Command(l.hosts[r], name, args...)
		},
		Capture: true, Stdin: true, Timeout: procTimeout,
		OnLine: func(r int, line string) {
			if strings.HasPrefix(line, lt.Ready) {
				once[r].Do(func() { close(ready[r]) })
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		j.Kill()
		j.Wait()
	})
	var ps []*proc
	for _, p := range j.Procs() {
		ps = append(ps, &proc{Proc: p, ready: ready[p.Rank()]})
	}
	return ps
}

// wait returns the exit code, failing the test if the process outlives d.
func (p *proc) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-p.Done():
		return p.End().Code
	case <-time.After(d):
		t.Errorf("PE process %d still running after %v; output:\n%s", p.Pid(), d, p.Output())
		_ = p.Signal(syscall.SIGKILL)
		return p.End().Code
	}
}

// awaitReady waits for every process to print READY.
func awaitReady(t *testing.T, ps []*proc) {
	t.Helper()
	for r, p := range ps {
		select {
		case <-p.ready:
		case <-p.Done():
			t.Fatalf("PE %d exited %d before it was ready:\n%s", r, p.End().Code, p.Output())
		case <-time.After(procTimeout):
			t.Fatalf("PE %d not ready:\n%s", r, p.Output())
		}
	}
}

func expectCodes(t *testing.T, ps []*proc, want int) {
	t.Helper()
	for r, p := range ps {
		if c := p.wait(t, procTimeout); c != want {
			t.Errorf("PE %d exited %d, want %d; output:\n%s", r, c, want, p.Output())
		}
	}
}

// failedAt reads when a PE saw the failure, and the error it saw, from
// the FAILED line it printed.
func failedAt(t *testing.T, p *proc) (time.Time, string) {
	t.Helper()
	for _, line := range strings.Split(p.Output(), "\n") {
		if rest, ok := strings.CutPrefix(line, "FAILED "); ok {
			ns, msg, _ := strings.Cut(rest, ":")
			if v, err := strconv.ParseInt(ns, 10, 64); err == nil {
				return time.Unix(0, v), strings.TrimSpace(msg)
			}
		}
	}
	t.Errorf("no FAILED line in:\n%s", p.Output())
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
