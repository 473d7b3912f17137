package world

import (
	"encoding/binary"
	"syscall"

	"github.com/goshmem/shmem/internal/portskip"
	"github.com/goshmem/shmem/transport/rdma/fabric"
)

// fabricOpener is openFabric's signature, so that a test can hand
// openFabricAvoiding the endpoints it needs.
type fabricOpener func(fabric.Config) (fabricEndpoint, error)

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
