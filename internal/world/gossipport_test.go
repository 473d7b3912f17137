package world

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/goshmem/shmem/bootstrap"
	"github.com/goshmem/shmem/membership"
)

// TestGossipPortInRange: a gossip member whose address leaves the port to
// the kernel bound one outside SHMEM_PORT_RANGE (seen: 44739 with the
// range 21300-21320), where a firewall opened for the range blocks the
// other members' probes and state exchanges. It now binds a port of the
// range, moving past one taken (TCP held here) and a seed's.
func TestGossipPortInRange(t *testing.T) {
	lo := threeFreePorts(t)
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(lo)))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	seed := net.JoinHostPort("127.0.0.1", strconv.Itoa(lo+1))
	j := &joiner{log: slog.New(slog.NewTextHandler(io.Discard, nil)), cfg: Config{
		Ports:  bootstrap.PortRange{Lo: lo, Hi: lo + 2},
		Gossip: &GossipConfig{Seeds: []string{seed}, Bind: "127.0.0.1:0", RankHint: -1},
	}}
	cfg := membership.DefaultConfig()
	cfg.JobID, cfg.Secret, cfg.NPEs = "job", []byte("secret"), 1
	cfg.BindAddr, cfg.AdvertiseAddr, cfg.Seeds = "127.0.0.1", "127.0.0.1", []string{seed}
	cfg.Logger, cfg.FormTimeout = j.log, 10*time.Second
	w, err := j.formInRange(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if got, want := w.Self().Addr, net.JoinHostPort("127.0.0.1", strconv.Itoa(lo+2)); got != want {
		t.Fatalf("gossip bound %s, want %s: the only port of %d-%d neither taken nor a seed's", got, want, lo, lo+2)
	}
}

// threeFreePorts returns the first of 3 consecutive loopback ports free
// for TCP and UDP a moment ago, below the ephemeral range when there is
// room (bootstrap.FreePort).
func threeFreePorts(t *testing.T) int {
	t.Helper()
	for range 64 {
		p, err := bootstrap.FreePort("127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		free := p+2 <= 65535
		for q := p; q < p+3 && free; q++ {
			a := net.JoinHostPort("127.0.0.1", strconv.Itoa(q))
			l, err := net.Listen("tcp", a)
			if free = err == nil; !free {
				break
			}
			u, err := net.ListenPacket("udp", a)
			l.Close()
			if free = err == nil; free {
				u.Close()
			}
		}
		if free {
			return p
		}
	}
	t.Fatal("no 3 consecutive free ports")
	return 0
}
