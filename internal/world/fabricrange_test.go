//go:build cgo && goshmem_fabric

package world

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/goshmem/shmem/bootstrap"
	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport/udma"
)

// The real libfabric, with SHMEM_PORT_RANGE three ports p..p+2 of which p
// is taken by another socket and p+1 is the unique ID's rendezvous port:
// startFabric must open the node's endpoint on p+2, where a firewall
// opened for the range lets peers reach it (it took a port of the
// kernel's ephemeral range before). With every port taken it fails with
// ErrBootstrap naming the range.
func TestStartFabricInPortRange(t *testing.T) {
	for _, pv := range []struct{ prov, network string }{
		{"tcp;ofi_rxm", "tcp"},
		{"sockets", "tcp"},
		{"udp;ofi_rxd", "udp"},
	} {
		t.Run(pv.prov, func(t *testing.T) {
			p := freePorts(t, pv.network, 3)
			busy := hold(t, pv.network, p)
			rng := bootstrap.PortRange{Lo: p, Hi: p + 2}
			j := fabricJoiner(t, pv.prov, p+1, rng)
			var u undo
			defer func() { _ = u.close() }()
			if err := j.startFabric(&u); err != nil {
				if strings.Contains(err.Error(), "fi_getinfo (") {
					t.Skipf("libfabric has no usable provider %q here: %v", pv.prov, err)
				}
				t.Fatal(err)
			}
			if got := endpointPort(j.fab.Address()); got != p+2 {
				t.Fatalf("the fabric node's endpoint is on port %d, want %d (%d is taken, %d the rendezvous's)", got, p+2, p, p+1)
			}

			// p+2 is the first node's now; p stays taken.
			j2 := fabricJoiner(t, pv.prov, p+1, rng)
			var u2 undo
			defer func() { _ = u2.close() }()
			err := j2.startFabric(&u2)
			var e *errs.Error
			if !errors.As(err, &e) || !errors.Is(err, errs.ErrBootstrap) || e.Op != "fabric.Open" ||
				!strings.Contains(err.Error(), bootstrap.EnvPortRange+"="+rng.String()) {
				t.Fatalf("startFabric with every port of %v taken: %v; want fabric.Open wrapping ErrBootstrap naming %s", rng, err, bootstrap.EnvPortRange)
			}
			busy.Close()
		})
	}
}

// fabricJoiner is rank 0 of a one-PE world on the fabric provider prov
// bound to 127.0.0.1, whose unique ID's port is uidPort and whose ports
// are confined to rng.
func fabricJoiner(t *testing.T, prov string, uidPort int, rng bootstrap.PortRange) *joiner {
	t.Helper()
	uid, err := bootstrap.NewUniqueID(net.JoinHostPort("127.0.0.1", strconv.Itoa(uidPort)), false, [32]byte{})
	if err != nil {
		t.Fatal(err)
	}
	j := &joiner{job: uid.JobName(), log: slog.New(slog.NewTextHandler(io.Discard, nil)), cfg: Config{
		UID: uid, Rank: 0, NPEs: 1, HeapSize: 1 << 16, Provider: ProviderFabric, Ports: rng,
		Fabric: FabricConfig{Provider: prov, Node: "127.0.0.1"},
	}}
	t.Cleanup(func() { _, _ = udma.Reap(j.job) })
	return j
}

// freePorts returns the first of n consecutive ports of 127.0.0.1 that
// were free on network a moment ago, below the ephemeral range when there
// is room (bootstrap.FreePort).
func freePorts(t *testing.T, network string, n int) int {
	t.Helper()
	for range 64 {
		p, err := bootstrap.FreePort("127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		if p+n-1 > 65535 {
			continue
		}
		free := true
		for q := p; q < p+n && free; q++ {
			c, err := listenOn(network, q)
			if free = err == nil; free {
				c.Close()
			}
		}
		if free {
			return p
		}
	}
	t.Fatalf("no %d consecutive free %s ports", n, network)
	return 0
}

func listenOn(network string, port int) (io.Closer, error) {
	a := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	if network == "udp" {
		return net.ListenPacket(network, a)
	}
	return net.Listen(network, a)
}

// hold takes port on network until the test ends.
func hold(t *testing.T, network string, port int) io.Closer {
	t.Helper()
	c, err := listenOn(network, port)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
