package world

import (
	"errors"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport/rdma"
)

// A PE whose heap size, statics size or frame version differs is refused
// by name; a record from a build before the Wire field decodes as version
// 0, which no build speaks.
func TestCheckPeers(t *testing.T) {
	good := func() []record {
		recs := make([]record, 3)
		for r := range recs {
			recs[r] = record{Version: recordVersion, Rank: r, HeapSize: 1 << 20, Wire: rdma.WireVersion, Statics: 4096}
		}
		return recs
	}
	mine := record{HeapSize: 1 << 20, Statics: 4096}
	if err := checkPeers(0, mine, good()); err != nil {
		t.Fatalf("alike PEs refused: %v", err)
	}
	// A layout is compared only where both PEs know theirs.
	mine.StaticsLayout = 0xfeed
	unknown := good()
	unknown[1].StaticsLayout = 0xbeef
	if err := checkPeers(0, mine, good()); err != nil {
		t.Fatalf("a peer with an unknown statics layout refused: %v", err)
	}
	if err := checkPeers(0, record{HeapSize: 1 << 20, Statics: 4096}, unknown); err != nil {
		t.Fatalf("a peer's layout refused by a PE that knows none: %v", err)
	}
	type oldRecord struct { // what a build before the Wire field sends
		Version  int   `msgpack:"v"`
		Rank     int   `msgpack:"r"`
		HeapSize int64 `msgpack:"s"`
	}
	b, err := msgpack.Marshal(&oldRecord{Version: recordVersion, Rank: 0, HeapSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	old, err := decodeRecords([][]byte{b})
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		edit func([]record)
		want string
	}{
		"heap size":   {func(r []record) { r[2].HeapSize = 2 << 20 }, "SHMEM_SYMMETRIC_SIZE"},
		"wire":        {func(r []record) { r[2].Wire = rdma.WireVersion + 1 }, "frame version"},
		"statics":     {func(r []record) { r[2].Statics = 8192 }, "same executable"},
		"layout":      {func(r []record) { r[2].StaticsLayout = 0xbeef }, "laid out differently"},
		"older build": {func(r []record) { r[2] = old[0]; r[2].Rank = 2; r[2].Statics = 4096 }, "frame version 0"},
	} {
		recs := good()
		tc.edit(recs)
		err := checkPeers(0, mine, recs)
		var e *errs.Error
		if !errors.Is(err, errs.ErrInvalidArgument) || !errors.As(err, &e) || e.Target != 2 || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want ErrInvalidArgument naming PE 2 and %q", name, err, tc.want)
		}
	}
}

// FuzzDecodeRecords: records come from other processes; whatever their
// bytes, decoding returns records or an error, never a panic, and a
// decoded record has the version and rank its position demands: its
// position for the exchange's, -1 (then its position) for gossip's.
func FuzzDecodeRecords(f *testing.F) {
	good, err := msgpack.Marshal(&record{Version: recordVersion, Rank: 0, Host: "h", Control: "127.0.0.1:1",
		Data: "127.0.0.1:2", HeapSize: 1 << 20, PID: 7, Fabric: []byte{1, 2}, Wire: rdma.WireVersion, Statics: 4096})
	if err != nil {
		f.Fatal(err)
	}
	gossip, err := msgpack.Marshal(&record{Version: recordVersion, Rank: -1, Host: "h", Control: "127.0.0.1:1"})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(gossip)
	f.Add([]byte{0x80})
	f.Add([]byte{0xde, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		if recs, err := decodeRecords([][]byte{b}); err == nil && (recs[0].Version != recordVersion || recs[0].Rank != 0) {
			t.Fatalf("decoded a record with version %d, rank %d", recs[0].Version, recs[0].Rank)
		}
		// A gossip member's record says rank -1; the decoder gives it
		// its table position.
		recs, err := decodeGossipRecords([][]byte{b, b})
		if err != nil {
			return
		}
		if recs[1].Version != recordVersion || recs[1].Rank != 1 {
			t.Fatalf("decoded a gossip record with version %d, rank %d", recs[1].Version, recs[1].Rank)
		}
		if one, err := decodeGossipRecords([][]byte{b}); err != nil || one[0].Rank != 0 {
			t.Fatalf("decoding it alone: %v", err)
		}
	})
}
