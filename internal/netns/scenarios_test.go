package netns_test

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	lt "github.com/goshmem/shmem/internal/launch/launchtest"
	"github.com/goshmem/shmem/internal/netns"
)

// TestHostsGossip forms a world of four hosts by gossip and runs RMA,
// atomics, collectives and put-signal across them.
func TestHostsGossip(t *testing.T) {
	n := netns.New(t, netns.Config{Hosts: 4})
	l := newWorld(t, n, []int{0, 1, 2, 3}, lt.RoleSPMD, true)
	expectCodes(t, l.startAll(t), lt.ExitOK)
}

// TestHostsUniqueID forms a world by unique ID, rank 0 listening on host
// 0's address; host 0 runs two PEs, which share memory.
func TestHostsUniqueID(t *testing.T) {
	n := netns.New(t, netns.Config{Hosts: 3})
	l := newWorld(t, n, []int{0, 0, 1, 2}, lt.RoleSPMD, false)
	expectCodes(t, l.startAll(t), lt.ExitOK)
}

// TestHostsRefuseStrangers starts part of a world, lets a process with
// another job's secret try to join it, and checks it is refused while the
// world still forms and works.
func TestHostsRefuseStrangers(t *testing.T) {
	for _, gossip := range []bool{false, true} {
		t.Run(map[bool]string{false: "unique-id", true: "gossip"}[gossip], func(t *testing.T) {
			n := netns.New(t, netns.Config{Hosts: 3})
			l := newWorld(t, n, []int{0, 1, 2}, lt.RoleHold, gossip)
			ps := []*proc{l.start(t, 0), l.start(t, 1)}
			env := []string{"SHMEM_JOB_SECRET=another-job", lt.EnvInitTimeout + "=4s"}
			if !gossip {
				// torchrun-style: the stranger knows where rank 0 listens
				// but not the job's secret.
				uid := waitUID(t, l.uidFile())
				host, port, _ := strings.Cut(uid, ":")
				env = append(env, "MASTER_ADDR="+host, "MASTER_PORT="+port, "SHMEM_UID_FILE=")
			}
			stranger := l.start(t, 2, env...)
			if c := stranger.wait(t, procTimeout); c != lt.ExitInitFailed {
				t.Errorf("stranger exited %d, want %d (Init refused); output:\n%s", c, lt.ExitInitFailed, stranger.Output())
			}
			t.Logf("stranger: %s", strings.TrimSpace(stranger.Output()))
			ps = append(ps, l.start(t, 2))
			awaitReady(t, ps)
			for _, p := range ps {
				p.Stdin().Close()
			}
			expectCodes(t, ps, lt.ExitOK)
		})
	}
}

// waitUID returns the host:port of the unique ID rank 0 wrote.
func waitUID(t *testing.T, path string) string {
	t.Helper()
	deadline := time.Now().Add(procTimeout)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
			uid, err := parseUIDAddr(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			return uid
		}
		time.Sleep(20 * time.Millisecond) // polling a file another process writes
	}
	t.Fatalf("no unique ID in %s", path)
	return ""
}

// failureCase runs a four-host world in the wait role, breaks it with
// breakIt once every PE is ready, and checks that every survivor ends with
// ErrPEFailed within detectBound, finalizes cleanly and leaks nothing: no
// socket but a gossip probe's is open when Finalize returns, and nothing
// outlives that probe (see leaks; the PE exits lt.ExitLeak otherwise).
func failureCase(t *testing.T, n *netns.Net, victim int, breakIt func(ps []*proc) error, survivors []int, named string, env ...string) {
	env = append(env, fmt.Sprintf("%s=%d", lt.EnvWho, victim))
	checkFailure(t, newWorld(t, n, []int{0, 1, 2, 3}, lt.RoleWait, true, env...), breakIt, survivors, named)
}

// checkFailure starts l's world, breaks it with breakIt once every PE is
// ready, and checks that every survivor ends with ErrPEFailed, finalizes
// cleanly and leaks nothing, and that its error names named and comes
// within detectBound. It returns the PEs' processes.
func checkFailure(t *testing.T, l *hostsWorld, breakIt func(ps []*proc) error, survivors []int, named string) []*proc {
	each := make(map[int]string, len(survivors))
	for _, r := range survivors {
		each[r] = named
	}
	return checkFailureNamed(t, l, breakIt, each)
}

// checkFailureNamed is checkFailure where each survivor's error names
// what named gives for it.
func checkFailureNamed(t *testing.T, l *hostsWorld, breakIt func(ps []*proc) error, named map[int]string) []*proc {
	ps := l.startAll(t)
	awaitReady(t, ps)
	broke := time.Now()
	if err := breakIt(ps); err != nil {
		t.Fatal(err)
	}
	var worst time.Duration
	for _, r := range slices.Sorted(maps.Keys(named)) {
		p := ps[r]
		if c := p.wait(t, procTimeout); c != lt.ExitPEFailed {
			t.Errorf("PE %d exited %d, want %d (ErrPEFailed, clean Finalize, no leaks); output:\n%s", r, c, lt.ExitPEFailed, p.Output())
			continue
		}
		at, line := failedAt(t, p)
		if !strings.Contains(line, named[r]) {
			t.Errorf("PE %d's error does not name %q: %s; output:\n%s", r, named[r], line, p.Output())
		}
		d := at.Sub(broke)
		t.Logf("PE %d noticed the failure after %v: %s", r, d, line)
		worst = max(worst, d)
		if d > detectBound {
			t.Errorf("PE %d noticed the failure after %v, bound %v", r, d, detectBound)
		}
	}
	t.Logf("slowest survivor noticed the failure after %v", worst)
	return ps
}

func TestHostsKilledPE(t *testing.T) {
	n := netns.New(t, netns.Config{Hosts: 4})
	failureCase(t, n, 3, func(ps []*proc) error {
		return ps[3].Signal(syscall.SIGKILL)
	}, []int{0, 1, 2}, "PE 3")
}

func TestHostsCutLink(t *testing.T) {
	n := netns.New(t, netns.Config{Hosts: 4})
	// The cut-off PE keeps reading from PE 0 and must fail too.
	failureCase(t, n, 3, func([]*proc) error { return n.CutHost(3) }, []int{0, 1, 2, 3}, "PE")
}

// TestHostsCutLinkNotice: a world formed by unique ID (no gossip, so no
// memberlist detection), PE 3's host cut off while PEs 0, 1 and 2 keep
// reading from it and PE 3 reads from PE 0. The detection must end their
// pending reads (their data connections, cut without a reset, would only
// time out after 30 s, or hang in a dial): the control lane's heartbeats
// stop arriving, and each link is declared lost after its silence bound.
// PE 3, cut off, must end too, blaming PE 0: its own links fall silent the
// same way, and its read from PE 0 ends when PE 0 is declared failed.
func TestHostsCutLinkNotice(t *testing.T) {
	n := netns.New(t, netns.Config{Hosts: 4})
	l := newWorld(t, n, []int{0, 1, 2, 3}, lt.RoleWait, false, lt.EnvWho+"=3", lt.EnvReaders+"=1")
	checkFailureNamed(t, l, func([]*proc) error { return n.CutHost(3) },
		map[int]string{0: "-> PE 3)", 1: "-> PE 3)", 2: "-> PE 3)", 3: "-> PE 0)"})
}

func TestHostsPartition(t *testing.T) {
	n := netns.New(t, netns.Config{Hosts: 4})
	// Both halves end: {0,1} hold the coordinator, {2,3} lose it.
	failureCase(t, n, 3, func([]*proc) error { return n.Partition([]int{0, 1}, []int{2, 3}) }, []int{0, 1, 2, 3}, "PE")
}

// TestHostsGlobalExit: PE 1 calls GlobalExit(42); every process, on every
// host, exits with 42.
func TestHostsGlobalExit(t *testing.T) {
	n := netns.New(t, netns.Config{Hosts: 3})
	l := newWorld(t, n, []int{0, 1, 2}, lt.RoleExit, true, lt.EnvWho+"=1")
	expectCodes(t, l.startAll(t), 42)
}

// TestHostsRelay: hosts A and C are on different LANs and have no route to
// each other; host B is on both and runs rank 0, which every host reaches.
// Traffic between A's and C's PEs must be relayed through B.
func TestHostsRelay(t *testing.T) {
	n, a, b, c := relayNet(t)
	l := newWorld(t, n, []int{b, a, c}, lt.RoleSPMD, false, "SHMEM_LOG_LEVEL=info")
	ps := l.startAll(t)
	expectCodes(t, ps, lt.ExitOK)
	for r, peer := range map[int]int{1: 2, 2: 1} {
		if !strings.Contains(ps[r].Output(), fmt.Sprintf("peer=%d via=0", peer)) {
			t.Errorf("PE %d did not relay to PE %d through PE 0:\n%s", r, peer, ps[r].Output())
		}
	}
}

// relayNet builds TestHostsRelay's topology: hosts A and C on different
// LANs with no route to each other, host B on both. C reaches B's LAN-0
// address (which B advertises) through B's LAN-1 address; B does not
// forward, so C still cannot reach A.
func relayNet(t *testing.T) (n *netns.Net, a, b, c int) {
	a, b, c = 0, 1, 2
	n = netns.New(t, netns.Config{Hosts: 3, LANs: [][]int{{a, b}, {b, c}}})
	if out, err := n.IP(c, "route", "add", netns.Addr(0, b)+"/32", "via", netns.Addr(1, b)); err != nil {
		t.Fatalf("route: %v: %s", err, out)
	}
	if out, err := n.IP(a, "route", "get", n.Hosts[c].Addr()); err == nil {
		t.Fatalf("host A has a route to host C: %s", out)
	}
	if out, err := n.IP(c, "route", "get", n.Hosts[a].Addr()); err == nil {
		t.Fatalf("host C has a route to host A: %s", out)
	}
	return n, a, b, c
}

// TestHostsRelayKilled: in TestHostsRelay's topology (rank 0 on B, PE 1
// on A, PE 2 on C), PE 2 is killed. PE 1 has no path to PE 2 but through
// PE 0 and no control connection to it. Waiting in a barrier, it learns
// of the failure only from PE 0's notice; reading from PE 2, its relayed
// reads must fail too. Either way both survivors end with ErrPEFailed
// naming PE 2 within seconds, finalize cleanly and leak nothing.
func TestHostsRelayKilled(t *testing.T) {
	for _, readers := range []bool{false, true} {
		t.Run(map[bool]string{false: "barrier", true: "reads"}[readers], func(t *testing.T) {
			n, a, b, c := relayNet(t)
			env := []string{lt.EnvWho + "=2", "SHMEM_LOG_LEVEL=info"}
			if readers {
				env = append(env, lt.EnvReaders+"=1")
			}
			l := newWorld(t, n, []int{b, a, c}, lt.RoleWait, false, env...)
			ps := checkFailure(t, l, func(ps []*proc) error { return ps[2].Signal(syscall.SIGKILL) }, []int{0, 1}, "-> PE 2)")
			if !strings.Contains(ps[1].Output(), "peer=2 via=0") {
				t.Errorf("PE 1 did not relay to PE 2 through PE 0:\n%s", ps[1].Output())
			}
		})
	}
}

// TestHostsRankZeroUnreachable: the relay topology with rank 0 on host A,
// which host C cannot reach. The world forms by gossip (seeded at B, which
// both reach), but rank 0 and every PE must connect to each other: rank 0
// leads the sealing of the rank table, and no report from PE 2 reaches
// it, so every PE's Init fails at the start-up timeout (cut to 12 s here)
// naming PE 2 (rank 0) or rank 0 (the others), instead of forming a world
// whose control plane could not work.
func TestHostsRankZeroUnreachable(t *testing.T) {
	n, a, b, c := relayNet(t)
	seed := n.Hosts[b].Addr() + ":" + gossipPort
	l := newWorld(t, n, []int{a, b, c}, lt.RoleSPMD, true, lt.EnvSeeds+"="+seed, lt.EnvInitTimeout+"=12s")
	ps := l.startAll(t)
	want := map[int]string{
		0: "as leader could not seal: no report from rank 2",
		1: "reported the table to its leader, rank 0",
		2: "reported the table to its leader, rank 0",
	}
	for r, p := range ps {
		if code := p.wait(t, procTimeout); code != lt.ExitInitFailed {
			t.Errorf("PE %d exited %d, want %d (Init refused); output:\n%s", r, code, lt.ExitInitFailed, p.Output())
			continue
		}
		if out := p.Output(); !strings.Contains(out, want[r]) || !strings.Contains(out, "bootstrap failed") {
			t.Errorf("PE %d's Init error does not say %q (ErrBootstrap):\n%s", r, want[r], out)
		}
		t.Logf("PE %d: %s", r, strings.TrimSpace(ps[r].Output()))
	}
}
