package fabric

import (
	"log/slog"
	"time"

	"github.com/goshmem/shmem/internal/errs"
)

// Config describes one node. Zero values of the tuning fields take the
// defaults named on each field.
type Config struct {
	// Rank is this PE's number; NPEs the size of the world. Required,
	// 0 <= Rank < NPEs.
	Rank, NPEs int
	// Heap is the local symmetric heap, registered with fi_mr_reg for remote
	// reads, writes and atomics. It must not be Go-allocated memory that the
	// collector may move or free while the node lives: pass an mmap'd
	// region (heap.Region) or memory that outlives the node. May be empty.
	// Its capacity is the reservation the heap may grow into: Node.GrowHeap
	// registers up to cap(Heap) bytes once the caller has mapped them.
	Heap []byte
	// Statics is the local statics region (transport.StaticsBase), a
	// second symmetric region beside the heap: registered like Heap, under
	// the same rule on its memory, for remote reads, writes and atomics,
	// and named in Address, so that peers reach byte x of it at offset
	// StaticsBase+x. It never grows. Default: none, and such offsets are
	// refused like any outside the heap.
	Statics []byte

	// Provider selects the libfabric provider by name ("verbs;ofi_rxm",
	// "tcp;ofi_rxm", "sockets", ...). Default "": the first provider that
	// offers reliable datagram endpoints with RMA and atomics, which is
	// verbs on a host with an RDMA NIC.
	Provider string
	// Domain selects the domain (NIC or interface), e.g. "mlx5_0" or "lo".
	// Default "": the provider's first.
	Domain string
	// Node is the local address to bind for providers that take one (tcp,
	// sockets), e.g. "127.0.0.1". Default "": the provider's choice.
	Node string
	// Port is the IP port the node's endpoint binds (fi_getinfo's service,
	// with FI_SOURCE), on Node or, when Node is "", on the address the
	// provider picked: a port a firewall was opened for (the world takes
	// one from SHMEM_PORT_RANGE). tcp;ofi_rxm and sockets listen on it
	// (TCP), udp;ofi_rxd receives on it (UDP). Open fails with an error
	// that also matches syscall.EADDRINUSE (errors.Is) when it is taken.
	// A provider whose address is not an IP one (verbs over InfiniBand, a
	// sockaddr_ib; shm, a string) binds no port a firewall sees and
	// ignores it; Address then names no port. The endpoints of streams
	// (NewStream) still take ports the kernel chooses: no peer addresses
	// them, they only send, and hear answers on what they sent. Default
	// 0: a port the kernel chooses from its ephemeral range, as a
	// listener on port 0 gets, since a fixed default would collide
	// between the nodes of one host.
	Port int

	// Slots is how many operations that need a completion context (every
	// operation except inject puts and non-fetching atomics) may be in
	// flight at once; more wait for a free slot. Default 256.
	Slots int
	// BounceSize is each slot's registered staging buffer: gets and puts up
	// to this size are copied through it, so the provider never holds a
	// pointer into Go memory; larger ones pin the caller's buffer instead.
	// Default 16 KiB.
	BounceSize int
	// OpTimeout bounds every wait for a completion; an expired wait returns
	// errs.ErrTimeout naming the operation and the peer, and fails the peer.
	// Default 30 s.
	OpTimeout time.Duration
	// Logger receives provider choices and failures. Default slog.Default().
	Logger *slog.Logger
}

func (c *Config) withDefaults() (Config, error) {
	cfg := *c
	bad := func(format string, args ...any) (Config, error) {
		return cfg, errs.New("fabric.Open", c.Rank, errs.NoPE, errs.ErrInvalidArgument, format, args...)
	}
	if cfg.NPEs <= 0 || cfg.Rank < 0 || cfg.Rank >= cfg.NPEs {
		return bad("rank %d of %d PEs", cfg.Rank, cfg.NPEs)
	}
	if cfg.Slots == 0 {
		cfg.Slots = 256
	}
	if cfg.BounceSize == 0 {
		cfg.BounceSize = 16 << 10
	}
	if cfg.OpTimeout == 0 {
		cfg.OpTimeout = 30 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	switch {
	case cfg.Slots < 1 || cfg.Slots > 1<<16:
		return bad("Slots %d outside [1, 65536]", cfg.Slots)
	case cfg.BounceSize < 8 || cfg.BounceSize > 16<<20:
		return bad("BounceSize %d outside [8, 16 MiB]", cfg.BounceSize)
	case cfg.OpTimeout < 0:
		return bad("OpTimeout %v negative", cfg.OpTimeout)
	case len(cfg.Provider) > MaxProvider:
		return bad("provider name of %d bytes", len(cfg.Provider))
	case cfg.Port < 0 || cfg.Port > 65535:
		return bad("Port %d outside [0, 65535]", cfg.Port)
	}
	return cfg, nil
}
