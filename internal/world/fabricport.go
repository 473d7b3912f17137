package world

import (
	"encoding/binary"
	"syscall"

	"github.com/goshmem/shmem/bootstrap"
	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/internal/portskip"
	"github.com/goshmem/shmem/transport/rdma/fabric"
)

// fabricOpener is openFabric's signature, so that a test can hand
// openFabricAvoiding the endpoints it needs.
type fabricOpener func(fabric.Config) (fabricEndpoint, error)

// openFabricIn opens the fabric node with open at a port of ports, which
// are SHMEM_PORT_RANGE, other than those in skip (laterPorts): libfabric's
// tcp;ofi_rxm and sockets listen on the node's port, udp;ofi_rxd receives
// on it, and a peer on another host reaches it there, so a firewall opened
// for the range must find it there. The ports are tried as
// bootstrap.PortRange.Listen tries them (portskip.InRange: from a random
// start, each once, the next when fabric.Open fails with
// syscall.EADDRINUSE), and fail with errs.ErrBootstrap naming the range
// when every one is taken. fabric.Open binds the port only when the
// provider's source address, which fi_getinfo gives before anything binds,
// is an IP one: verbs over InfiniBand (a sockaddr_ib) and shm (a string)
// bind no TCP or UDP port a firewall sees, and ignore it; such a node,
// whose Address names no port (endpointPort 0), is taken as it is. A
// node on another port than asked is closed and refused. With ports Any
// the kernel chooses (openFabricAvoiding).
func openFabricIn(ports bootstrap.PortRange, cfg fabric.Config, skip []int, open fabricOpener) (fabricEndpoint, error) {
	if ports.Any() {
		return openFabricAvoiding(cfg, skip, open)
	}
	where := "for the fabric endpoint"
	if cfg.Node != "" {
		where += " on " + cfg.Node
	}
	return portskip.InRange("fabric.Open", cfg.Rank, bootstrap.EnvPortRange+"="+ports.String(), where, ports.Lo, ports.Hi, skip,
		func(port int) (fabricEndpoint, error) {
			c := cfg
			c.Port = port
			n, err := open(c)
			if err != nil {
				return nil, err
			}
			if got := endpointPort(n.Address()); got != port && got != 0 {
				n.Close()
				return nil, errs.New("fabric.Open", cfg.Rank, errs.NoPE, errs.ErrBootstrap,
					"provider %q bound its endpoint to port %d, not port %d of %s=%s", n.Provider(), got, port, bootstrap.EnvPortRange, ports)
			}
			return n, nil
		})
}

// openFabricAvoiding opens the fabric node with open at an endpoint whose
// port is none of skip (laterPorts, which the control and data listeners
// skip too). libfabric's tcp;ofi_rxm, sockets and udp;ofi_rxd bind their
// endpoint, at fi_endpoint, to a port the kernel chooses in its ephemeral
// range, as a listener on port 0 does, and keep it for the node's life:
// the node opens before the exchange, so it could be handed the unique
// ID's rendezvous port, which rank 0 binds only at its rendezvous, or a
// gossip seed's (see bootstrap.PortRange.Listen for what follows). A node
// on a skipped port is held open while another is opened, and closed
// after (portskip.Open). The endpoints of streams (NewStream) open after
// the exchange, so they need no such care.
func openFabricAvoiding(cfg fabric.Config, skip []int, open fabricOpener) (fabricEndpoint, error) {
	return portskip.Open("fabric.Open", cfg.Rank, "fabric endpoint", skip, func() (fabricEndpoint, int, error) {
		n, err := open(cfg)
		if err != nil {
			return nil, 0, err
		}
		return n, endpointPort(n.Address()), nil
	}, func(n fabricEndpoint) { n.Close() })
}

// Lengths of the sockaddrs that name IP endpoints (FI_SOCKADDR_IN,
// FI_SOCKADDR_IN6): family, port (network order), address.
const (
	sockaddrInLen  = 16
	sockaddrIn6Len = 28
)

// endpointPort is the IP port of a fabric node's Address: its endpoint
// name is a sockaddr_in or sockaddr_in6 for the providers that bind one
// (tcp, sockets, udp), whose family is in host order and port in network
// order. Other names (verbs over InfiniBand: a sockaddr_ib; shm: a
// string) bind no port the rendezvous could want, and give 0.
func endpointPort(addr []byte) int {
	a, err := fabric.DecodeAddress(addr)
	if err != nil || len(a.EP) < 4 {
		return 0
	}
	switch family := binary.NativeEndian.Uint16(a.EP); {
	case family == syscall.AF_INET && len(a.EP) == sockaddrInLen,
		family == syscall.AF_INET6 && len(a.EP) == sockaddrIn6Len:
		return int(binary.BigEndian.Uint16(a.EP[2:4]))
	}
	return 0
}
