//go:build cgo && goshmem_fabric

package fabric

import (
	"encoding/binary"
	"errors"
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/goshmem/shmem/bootstrap"
	"github.com/goshmem/shmem/internal/errs"
)

// ipProviders are the providers whose endpoint binds an IP port, with the
// network it binds on.
var ipProviders = []struct{ prov, network string }{
	{"tcp;ofi_rxm", "tcp"},
	{"sockets", "tcp"},
	{"udp;ofi_rxd", "udp"},
}

// epHostPort decodes the sockaddr_in of a node's Address (family in host
// order, port in network order); ok is false for another name.
func epHostPort(t *testing.T, addr []byte) (host string, port int, ok bool) {
	t.Helper()
	a, err := DecodeAddress(addr)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.EP) != 16 || binary.NativeEndian.Uint16(a.EP) != syscall.AF_INET {
		return "", 0, false
	}
	return net.IP(a.EP[4:8]).String(), int(binary.BigEndian.Uint16(a.EP[2:4])), true
}

// freePort is a port of 127.0.0.1 free a moment ago on network, below the
// ephemeral range when there is room (bootstrap.FreePort checks TCP).
func freePort(t *testing.T, network string) int {
	t.Helper()
	for range 32 {
		p, err := bootstrap.FreePort("127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		if network == "tcp" {
			return p
		}
		if c, err := net.ListenPacket(network, net.JoinHostPort("127.0.0.1", strconv.Itoa(p))); err == nil {
			c.Close()
			return p
		}
	}
	t.Fatalf("no free %s port", network)
	return 0
}

// openOrSkip opens cfg's node, skipping the test when libfabric lacks the
// provider (fi_getinfo finds none).
func openOrSkip(t *testing.T, cfg Config) *Node {
	t.Helper()
	cfg.Logger = quietLog()
	n, err := Open(cfg)
	if err != nil {
		if strings.Contains(err.Error(), "fi_getinfo (") {
			t.Skipf("libfabric has no usable provider %q here: %v", cfg.Provider, err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

// Config.Port is the port the node's endpoint binds, and Address names
// it; a second node at the same port, or a node at a port another socket
// holds, fails with an error that matches syscall.EADDRINUSE and
// ErrBootstrap, names fabric.Open, the PE and the port. Nodes at fixed
// ports reach each other, and a stream's endpoint (which must not take
// the node's port) opens and reaches a peer too.
func TestOpenAtPort(t *testing.T) {
	for _, pv := range ipProviders {
		t.Run(pv.prov, func(t *testing.T) {
			p0, p1 := freePort(t, pv.network), freePort(t, pv.network)
			if p0 == p1 {
				t.Skip("the same port twice")
			}
			cfg := func(rank, port int) Config {
				return Config{Rank: rank, NPEs: 2, Heap: mmapHeap(t, 4096), Provider: pv.prov, Node: "127.0.0.1", Port: port}
			}
			n0 := openOrSkip(t, cfg(0, p0))
			n1 := openOrSkip(t, cfg(1, p1))
			for r, n := range []*Node{n0, n1} {
				want := []int{p0, p1}[r]
				if host, port, ok := epHostPort(t, n.Address()); !ok || host != "127.0.0.1" || port != want {
					t.Fatalf("node %d: endpoint %s:%d (IP %v), want 127.0.0.1:%d", r, host, port, ok, want)
				}
			}

			// The port is taken by n0, then by a socket of this process.
			_, err := Open(Config{Rank: 1, NPEs: 2, Provider: pv.prov, Node: "127.0.0.1", Port: p0, Logger: quietLog()})
			checkInUse(t, err, 1, p0)
			pf := freePort(t, pv.network)
			var closer interface{ Close() error }
			hold := net.JoinHostPort("127.0.0.1", strconv.Itoa(pf))
			if pv.network == "tcp" {
				closer, err = net.Listen("tcp", hold)
			} else {
				closer, err = net.ListenPacket(pv.network, hold)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer closer.Close()
			_, err = Open(Config{Rank: 0, NPEs: 2, Provider: pv.prov, Node: "127.0.0.1", Port: pf, Logger: quietLog()})
			checkInUse(t, err, 0, pf)

			addrs := [][]byte{n0.Address(), n1.Address()}
			for _, n := range []*Node{n0, n1} {
				if err := n.Connect(addrs); err != nil {
					t.Fatal(err)
				}
			}
			to1, err := n0.Path(1)
			if err != nil {
				t.Fatal(err)
			}
			st := newStream(t, n0)
			defer st.Close()
			via := streamPath(t, st, to1)
			if err := to1.Put(0, []byte{7}); err != nil {
				t.Fatal(err)
			}
			if err := via.Put(8, []byte{9}); err != nil {
				t.Fatal(err)
			}
			if err := n0.Engine().Quiet(); err != nil {
				t.Fatal(err)
			}
			if err := st.Quiet(); err != nil {
				t.Fatal(err)
			}
			if h := n1.cfg.Heap; h[0] != 7 || h[8] != 9 {
				t.Fatalf("PE 1's heap has %d and %d, want 7 (node) and 9 (stream)", h[0], h[8])
			}
		})
	}
}

func checkInUse(t *testing.T, err error, pe, port int) {
	t.Helper()
	var e *errs.Error
	if !errors.As(err, &e) || !errors.Is(err, syscall.EADDRINUSE) || !errors.Is(err, errs.ErrBootstrap) ||
		e.Op != "fabric.Open" || e.PE != pe || !strings.Contains(err.Error(), "port "+strconv.Itoa(port)) {
		t.Fatalf("Open at a taken port %d: %v; want fabric.Open (PE %d) naming the port, matching EADDRINUSE and ErrBootstrap", port, err, pe)
	}
	t.Log(err)
}

// Without a Node the port is bound on the address the provider picks
// without a port, not on 0.0.0.0 (which sockets and udp;ofi_rxd bind, and
// put in the address, when fi_getinfo has a service and no node).
func TestOpenAtPortWithoutNode(t *testing.T) {
	for _, pv := range ipProviders {
		t.Run(pv.prov, func(t *testing.T) {
			free := openOrSkip(t, Config{Rank: 0, NPEs: 1, Provider: pv.prov})
			want, _, ok := epHostPort(t, free.Address())
			if !ok {
				t.Skipf("provider %q names its endpoint with no IPv4 address here", pv.prov)
			}
			free.Close()
			p := freePort(t, pv.network)
			n := openOrSkip(t, Config{Rank: 0, NPEs: 1, Provider: pv.prov, Port: p})
			if host, port, _ := epHostPort(t, n.Address()); host != want || port != p {
				t.Fatalf("endpoint %s:%d, want %s:%d", host, port, want, p)
			}
		})
	}
}

// Another failure does not pass for a taken port.
func TestOpenFailureIsNotInUse(t *testing.T) {
	_, err := Open(Config{Rank: 0, NPEs: 1, Provider: "no-such-provider", Port: 40000, Logger: quietLog()})
	if !errors.Is(err, errs.ErrBootstrap) || errors.Is(err, syscall.EADDRINUSE) {
		t.Fatalf("Open with an unknown provider: %v; want ErrBootstrap, not EADDRINUSE", err)
	}
	_, err = Open(Config{Rank: 0, NPEs: 1, Port: 65536})
	if !errors.Is(err, errs.ErrInvalidArgument) {
		t.Fatalf("Open at port 65536: %v; want ErrInvalidArgument", err)
	}
}
