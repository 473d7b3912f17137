package world

import (
	"strings"
	"testing"
)

// TestGossipAddrs: a member told SHMEM_GOSSIP_ADDR=0.0.0.0:7946 advertised
// 0.0.0.0 to the others, who on another host would dial themselves; it
// now binds every interface and advertises its control listener's host.
func TestGossipAddrs(t *testing.T) {
	for _, tc := range []struct {
		bind, ctl, host, adv string
		port                 int
		err                  string
	}{
		{bind: "10.0.0.5:7946", ctl: "10.0.0.5", host: "10.0.0.5", adv: "10.0.0.5", port: 7946},
		{bind: "0.0.0.0:7946", ctl: "10.0.0.5", host: "0.0.0.0", adv: "10.0.0.5", port: 7946},
		{bind: "[::]:0", ctl: "fd00::5", host: "::", adv: "fd00::5"},
		{bind: "0.0.0.0:7946", ctl: "0.0.0.0", err: "need an IP address"},
		{bind: "node1:7946", ctl: "10.0.0.5", err: "must be an IP address"},
		{bind: "10.0.0.5", ctl: "10.0.0.5", err: "missing port"},
		{bind: "10.0.0.5:70000", ctl: "10.0.0.5", err: "bad port"},
	} {
		host, adv, port, err := gossipAddrs(tc.bind, tc.ctl)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want an error saying %q", tc.bind, err, tc.err)
			}
			continue
		}
		if err != nil || host != tc.host || adv != tc.adv || port != tc.port {
			t.Errorf("%s: %q %q %d %v, want %q %q %d", tc.bind, host, adv, port, err, tc.host, tc.adv, tc.port)
		}
	}
}
