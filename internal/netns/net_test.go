package netns

import (
	"strings"
	"testing"
)

func TestNetBuildsHostsAndCleansUp(t *testing.T) {
	var names []string
	t.Run("net", func(t *testing.T) {
		n := New(t, Config{Hosts: 3, LANs: [][]int{{0, 1}, {1, 2}}})
		for _, h := range n.Hosts {
			names = append(names, h.NS)
		}
		names = append(names, n.Switch)
		if got := n.Hosts[1].Addrs; got[0] != "10.213.1.2" || got[1] != "10.213.2.2" {
			t.Fatalf("host 1 addresses %v", got)
		}
		out, err := n.Command(0, "ip", "-4", "-o", "addr", "show", "dev", "eth0").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "10.213.1.1/24") {
			t.Fatalf("host 0 eth0: %v: %s", err, out)
		}
		// Host 0 reaches host 1 on LAN 0 but has no route to host 2.
		if out, err := n.IP(0, "route", "get", "10.213.1.2"); err != nil {
			t.Fatalf("route to host 1: %v: %s", err, out)
		}
		if out, err := n.IP(0, "route", "get", "10.213.2.3"); err == nil {
			t.Fatalf("host 0 has a route to host 2: %s", out)
		}
		if err := n.CutHost(2); err != nil {
			t.Fatal(err)
		}
		if err := n.Partition([]int{0}, []int{1}); err != nil {
			t.Fatal(err)
		}
	})
	if len(names) == 0 {
		return // skipped
	}
	list, err := ipCmd("netns", "list")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if strings.Contains(list, name) {
			t.Errorf("namespace %s left behind:\n%s", name, list)
		}
	}
}
