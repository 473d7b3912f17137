package world

import (
	"fmt"
	"os"
	"strings"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport/rdma"
)

// record is what each PE tells the others at the rendezvous.
type record struct {
	Version  int    `msgpack:"v"`
	Rank     int    `msgpack:"r"`
	Host     string `msgpack:"h"` // host identity: same value, same shared memory
	Control  string `msgpack:"a"` // control lane address (lane.Lane.Addr)
	Data     string `msgpack:"d"` // network transport address
	HeapSize int64  `msgpack:"s"`
	PID      int    `msgpack:"p"`
	// Fabric is the PE's fabric.Address when it runs the fabric provider.
	// Optional (omitempty), so the record keeps version 1: a PE that does
	// not know the field ignores it, and a fabric PE refuses a peer
	// without it by name (checkFabric).
	Fabric []byte `msgpack:"f,omitempty"`
	// Wire is the network frame format the PE speaks (rdma.WireVersion).
	// Optional too: an older build leaves it 0, which no build speaks.
	Wire int `msgpack:"w,omitempty"`
	// Statics is the size of the PE's statics region (Config.Statics), 0
	// without one: every PE must have the same, which for the C API means
	// the same executable. Optional (omitempty) like Wire.
	Statics int64 `msgpack:"t,omitempty"`
	// StaticsLayout is Config.StaticsLayout: PEs whose layouts are both
	// known must have the same. Optional like Wire.
	StaticsLayout uint64 `msgpack:"tl,omitempty"`
}

// checkPeers refuses, naming the first PE that differs, a world whose PEs
// disagree with this one (rank, mine) on what every PE must share.
func checkPeers(rank int, mine record, recs []record) error {
	for _, r := range recs {
		switch {
		case r.HeapSize != mine.HeapSize:
			return errs.New("Init", rank, r.Rank, errs.ErrInvalidArgument,
				"PE %d has a %d-byte heap, this PE %d: SHMEM_SYMMETRIC_SIZE must match", r.Rank, r.HeapSize, mine.HeapSize)
		case r.Statics != mine.Statics:
			return errs.New("Init", rank, r.Rank, errs.ErrInvalidArgument,
				"PE %d has %d bytes of statics, this PE %d (0: none that could be shared): statics are symmetric only between PEs that run the same executable",
				r.Rank, r.Statics, mine.Statics)
		case r.StaticsLayout != 0 && mine.StaticsLayout != 0 && r.StaticsLayout != mine.StaticsLayout:
			return errs.New("Init", rank, r.Rank, errs.ErrInvalidArgument,
				"PE %d's statics are laid out differently from this PE's (%d bytes each): statics are symmetric only between PEs that run the same executable",
				r.Rank, r.Statics)
		case r.Wire != rdma.WireVersion:
			return errs.New("Init", rank, r.Rank, errs.ErrInvalidArgument,
				"PE %d speaks network frame version %d, this PE %d: every PE must run the same goshmem build", r.Rank, r.Wire, rdma.WireVersion)
		}
	}
	return nil
}

const recordVersion = 1

// decodeRecords decodes the exchange's records: rank i's, at position i.
func decodeRecords(raw [][]byte) ([]record, error) {
	return decodeRanked(raw, func(i int) int { return i })
}

// decodeGossipRecords decodes the records of a gossip world's members, in
// table order. A member publishes its record before forming assigns ranks,
// with rank -1; each gets its position in the table as its rank.
func decodeGossipRecords(raw [][]byte) ([]record, error) {
	recs, err := decodeRanked(raw, func(int) int { return -1 })
	if err != nil {
		return nil, err
	}
	for i := range recs {
		recs[i].Rank = i
	}
	return recs, nil
}

// decodeRanked decodes raw, the record at position i claiming rank
// rank(i), and refuses one of another version or rank.
func decodeRanked(raw [][]byte, rank func(i int) int) ([]record, error) {
	recs := make([]record, len(raw))
	for i, b := range raw {
		// The rendezvous and gossip authenticated every sender with the
		// job secret, and bounded each record (64 KiB; gossip's 512-byte
		// metadata); msgpack decodes into a concrete struct only.
		if err := msgpack.Unmarshal(b, &recs[i]); err != nil {
			return nil, fmt.Errorf("record of rank %d: %v", i, err)
		}
		if recs[i].Version != recordVersion || recs[i].Rank != rank(i) {
			return nil, fmt.Errorf("record of rank %d: version %d, rank %d", i, recs[i].Version, recs[i].Rank)
		}
	}
	return recs, nil
}

// hostIdentity names this host's shared-memory domain: the kernel's boot ID
// (different per machine and per boot) and the hostname (different per
// container or namespace that fakes a host).
func hostIdentity() string {
	boot, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	name, _ := os.Hostname()
	return strings.TrimSpace(string(boot)) + "/" + name
}
