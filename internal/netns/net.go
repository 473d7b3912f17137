package netns

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// Config describes a network. The zero value is not valid: Hosts >= 1.
type Config struct {
	// Hosts is the number of hosts (namespaces).
	Hosts int
	// LANs lists, for each LAN, the hosts attached to it. Default: one LAN
	// with every host. A host on several LANs gets one interface per LAN,
	// eth0, eth1, ... in LAN order.
	LANs [][]int
}

// Net is a network of hosts that lives until the test ends.
type Net struct {
	t      testing.TB
	prefix string
	// Switch is the namespace that holds the bridges.
	Switch string
	Hosts  []*Host
	lans   [][]int
	parts  int
}

// Host is one namespace of a Net.
type Host struct {
	// NS is the namespace's name, for ip netns exec.
	NS string
	// Addrs holds the host's address on each LAN it is on, keyed by LAN.
	Addrs map[int]string
	// Ifaces holds the interface name inside the host, keyed by LAN.
	Ifaces map[int]string
}

// Addr is the host's address on its first LAN (what it advertises).
func (h *Host) Addr() string { return h.Addrs[h.firstLAN()] }

func (h *Host) firstLAN() int {
	first := -1
	for k := range h.Addrs {
		if first < 0 || k < first {
			first = k
		}
	}
	return first
}

// Addr returns host h's address on LAN lan: 10.213.(lan+1).(h+1).
func Addr(lan, h int) string { return fmt.Sprintf("10.213.%d.%d", lan+1, h+1) }

// Available reports why namespaces cannot be made here, or "" when they can.
func Available() string {
	if os.Geteuid() != 0 {
		return "network-namespace tests need root (CI runs them as root)"
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return "network-namespace tests need ip(8) from iproute2 (apt-get install iproute2)"
	}
	return ""
}

// New builds the network described by cfg and removes it when the test
// ends, even if it fails. It skips the test when namespaces cannot be made.
func New(t testing.TB, cfg Config) *Net {
	t.Helper()
	if why := Available(); why != "" {
		t.Skip(why)
	}
	if cfg.Hosts < 1 || cfg.Hosts > 200 {
		t.Fatalf("netns: %d hosts, want 1..200", cfg.Hosts)
	}
	lans := cfg.LANs
	if lans == nil {
		all := make([]int, cfg.Hosts)
		for i := range all {
			all[i] = i
		}
		lans = [][]int{all}
	}
	if len(lans) > 200 {
		t.Fatalf("netns: %d LANs, want at most 200", len(lans))
	}
	sweepStale()
	var rnd [3]byte
	_, _ = rand.Read(rnd[:])
	n := &Net{t: t, prefix: fmt.Sprintf("gs-%d-%s", os.Getpid(), hex.EncodeToString(rnd[:])), lans: lans}
	n.Switch = n.prefix + "-sw"
	t.Cleanup(n.cleanup)
	if out, err := ipCmd("netns", "add", n.Switch); err != nil {
		t.Skipf("cannot create network namespaces here (%v: %s)", err, out)
	}
	n.must("-n", n.Switch, "link", "set", "lo", "up")
	for i := 0; i < cfg.Hosts; i++ {
		h := &Host{NS: fmt.Sprintf("%s-%d", n.prefix, i), Addrs: map[int]string{}, Ifaces: map[int]string{}}
		n.Hosts = append(n.Hosts, h)
		n.must("netns", "add", h.NS)
		n.must("-n", h.NS, "link", "set", "lo", "up")
	}
	for k, members := range lans {
		br := bridgeName(k)
		n.must("-n", n.Switch, "link", "add", br, "type", "bridge")
		n.must("-n", n.Switch, "link", "set", br, "up")
		for _, i := range members {
			if i < 0 || i >= cfg.Hosts {
				t.Fatalf("netns: LAN %d names host %d of %d", k, i, cfg.Hosts)
			}
			h := n.Hosts[i]
			ifc := "eth" + strconv.Itoa(len(h.Ifaces))
			port := portName(i, k)
			n.must("-n", h.NS, "link", "add", ifc, "type", "veth", "peer", "name", port, "netns", n.Switch)
			n.must("-n", h.NS, "addr", "add", Addr(k, i)+"/24", "dev", ifc)
			n.must("-n", h.NS, "link", "set", ifc, "up")
			n.must("-n", n.Switch, "link", "set", port, "master", br, "up")
			h.Addrs[k], h.Ifaces[k] = Addr(k, i), ifc
		}
	}
	return n
}

func bridgeName(lan int) string { return "br" + strconv.Itoa(lan) }

func portName(host, lan int) string { return fmt.Sprintf("p%dl%d", host, lan) }

// IP runs ip(8) with args inside host h's namespace (ip -n NS args...).
func (n *Net) IP(h int, args ...string) (string, error) {
	return ipCmd(append([]string{"-n", n.Hosts[h].NS}, args...)...)
}

// Command returns a command that runs inside host h's namespace. Its
// process is the command itself (ip netns exec execs it), so killing
// cmd.Process kills the program.
func (n *Net) Command(h int, name string, args ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", n.Hosts[h].NS, name}, args...)...)
}

// CutHost takes every link of host h down at the switch, as if its cables
// were pulled: its sockets get no reset, only silence.
func (n *Net) CutHost(h int) error {
	for k := range n.Hosts[h].Addrs {
		if _, err := ipCmd("-n", n.Switch, "link", "set", portName(h, k), "down"); err != nil {
			return err
		}
	}
	return nil
}

// Partition splits every LAN: the hosts in each of groups[1:] are moved to
// a bridge of their own, so they reach each other but no host outside their
// group. Hosts in no group stay with groups[0].
func (n *Net) Partition(groups ...[]int) error {
	for _, g := range groups[1:] {
		n.parts++
		for k, members := range n.lans {
			br := fmt.Sprintf("br%dp%d", k, n.parts)
			if _, err := ipCmd("-n", n.Switch, "link", "add", br, "type", "bridge"); err != nil {
				return err
			}
			if _, err := ipCmd("-n", n.Switch, "link", "set", br, "up"); err != nil {
				return err
			}
			for _, i := range g {
				if !contains(members, i) {
					continue
				}
				if _, err := ipCmd("-n", n.Switch, "link", "set", portName(i, k), "master", br); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func (n *Net) must(args ...string) {
	n.t.Helper()
	if out, err := ipCmd(args...); err != nil {
		n.t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

func ipCmd(args ...string) (string, error) {
	var out bytes.Buffer
	c := exec.Command("ip", args...)
	c.Stdout, c.Stderr = &out, &out
	err := c.Run()
	return strings.TrimSpace(out.String()), err
}

// cleanup kills what still runs in the hosts (only this test's processes
// can be there) and deletes every namespace, which deletes the links.
func (n *Net) cleanup() {
	for _, h := range n.Hosts {
		killAll(h.NS)
		if out, err := ipCmd("netns", "del", h.NS); err != nil {
			n.t.Logf("netns: deleting %s: %v: %s", h.NS, err, out)
		}
	}
	if out, err := ipCmd("netns", "del", n.Switch); err != nil && !strings.Contains(out, "No such file") {
		n.t.Logf("netns: deleting %s: %v: %s", n.Switch, err, out)
	}
}

func killAll(ns string) {
	out, err := ipCmd("netns", "pids", ns)
	if err != nil {
		return
	}
	for _, f := range strings.Fields(out) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 1 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// sweepStale deletes the namespaces of test runs whose process is gone
// (a run killed before its cleanup): names are gs-<pid>-...
func sweepStale() {
	out, err := ipCmd("netns", "list")
	if err != nil {
		return
	}
	for _, line := range strings.Split(out, "\n") {
		name, _, _ := strings.Cut(strings.TrimSpace(line), " ")
		rest, ok := strings.CutPrefix(name, "gs-")
		if !ok {
			continue
		}
		pidStr, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidStr)
		if err != nil || pid <= 1 || syscall.Kill(pid, 0) == nil {
			continue
		}
		killAll(name)
		_, _ = ipCmd("netns", "del", name)
	}
}
