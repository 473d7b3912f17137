package world

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
	"github.com/goshmem/shmem/transport/rdma/fabric"
)

// fakeFabric stands in for a fabric node in the checks of peers' records.
type fakeFabric struct{ fabricEndpoint }

func (fakeFabric) Provider() string { return "tcp;ofi_rxm" }

func fabricAddr(t *testing.T, rank int, prov string) []byte {
	t.Helper()
	b, err := fabric.Address{Rank: rank, Provider: prov, HeapSize: 1 << 20, Key: 7, EP: []byte{1, 2, 3}}.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestProviderSelection(t *testing.T) {
	for _, p := range []string{"", ProviderTCP} {
		j := &joiner{cfg: Config{Provider: p}}
		if on, err := j.useFabric(); on || err != nil {
			t.Errorf("Provider %q: fabric %v, %v", p, on, err)
		}
	}
	j := &joiner{cfg: Config{Provider: "ib"}}
	if _, err := j.useFabric(); !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), "SHMEM_RDMA_PROVIDER") {
		t.Errorf("Provider ib: %v", err)
	}
	j = &joiner{cfg: Config{Provider: ProviderFabric, Gossip: &GossipConfig{RankHint: -1}}}
	if _, err := j.useFabric(); !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), "WithSeeds") {
		t.Errorf("fabric with gossip, no launcher rank: %v", err)
	}
	j = &joiner{cfg: Config{Provider: ProviderFabric, Gossip: &GossipConfig{RankHint: 2}}}
	if on, err := j.useFabric(); !on || err != nil {
		t.Errorf("fabric with gossip and a launcher rank: %v, %v", on, err)
	}
	// The exchange must confirm the rank the node was opened under.
	j = &joiner{cfg: Config{Rank: 1, NPEs: 3, Gossip: &GossipConfig{RankHint: 2}}, fab: fakeFabric{}}
	if err := j.checkFabric(nil); !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), "launcher's rank 2") {
		t.Errorf("gossip rank differing from the hint: %v", err)
	}
}

// TestFabricRecordChecks: every peer's fabric address is decoded and
// checked before use, and a bad one fails Init naming the PE.
func TestFabricRecordChecks(t *testing.T) {
	good := func() []record {
		return []record{{Rank: 0, Fabric: fabricAddr(t, 0, "tcp;ofi_rxm")}, {Rank: 1, Fabric: fabricAddr(t, 1, "tcp;ofi_rxm")},
			{Rank: 2, Fabric: fabricAddr(t, 2, "tcp;ofi_rxm")}}
	}
	j := &joiner{cfg: Config{Rank: 0, NPEs: 3, HeapSize: 1 << 20}, fab: fakeFabric{}}
	if err := j.checkFabric(good()); err != nil {
		t.Fatalf("good records: %v", err)
	}
	cases := map[string]struct {
		fabric   []byte
		sentinel error
		text     string
	}{
		"truncated":      {fabricAddr(t, 2, "tcp;ofi_rxm")[:20], errs.ErrBootstrap, "fabric address of PE 2"},
		"garbage":        {[]byte("GSHF\x09garbage-garbage-garbage-garbage-garbage"), errs.ErrBootstrap, "fabric address of PE 2"},
		"other rank":     {fabricAddr(t, 1, "tcp;ofi_rxm"), errs.ErrBootstrap, "names rank 1"},
		"other provider": {fabricAddr(t, 2, "verbs;ofi_rxm"), errs.ErrBootstrap, "SHMEM_FABRIC_PROVIDER"},
		"missing":        {nil, errs.ErrInvalidArgument, "PE 2 offers no fabric address"},
	}
	for name, c := range cases {
		recs := good()
		recs[2].Fabric = c.fabric
		err := j.checkFabric(recs)
		var e *errs.Error
		if !errors.Is(err, c.sentinel) || !errors.As(err, &e) || e.Target != 2 || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%s: %v", name, err)
		}
	}
	tcp := &joiner{cfg: Config{Rank: 0, NPEs: 3}}
	recs := good()
	recs[0].Fabric = nil // this PE's own record
	if err := tcp.checkFabric(recs); !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), "PE 1 uses the fabric provider") {
		t.Errorf("TCP PE among fabric PEs: %v", err)
	}
}

// TestRecordFabricOptional: the fabric address is an optional field, so
// records without it are unchanged (version 1) and decoders that do not
// know a field skip it.
func TestRecordFabricOptional(t *testing.T) {
	plain, err := msgpack.Marshal(&record{Version: recordVersion, Rank: 0, Host: "h"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(plain), "\xa1f") {
		t.Errorf("a record without a fabric address encodes the field: %q", plain)
	}
	withF, err := msgpack.Marshal(&record{Version: recordVersion, Rank: 0, Host: "h", Fabric: []byte{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	recs, err := decodeRecords([][]byte{withF})
	if err != nil || string(recs[0].Fabric) != "\x01\x02" {
		t.Fatalf("decoded %+v, %v", recs, err)
	}
	var old struct {
		Version int    `msgpack:"v"`
		Host    string `msgpack:"h"`
	}
	if err := msgpack.Unmarshal(withF, &old); err != nil || old.Host != "h" {
		t.Fatalf("a decoder without the field: %+v, %v", old, err)
	}
}

// TestPollingBellBoundsWaits: a wait on a bell nobody rings ends anyway,
// so a fabric write that cannot ring is seen by the next check.
func TestPollingBellBoundsWaits(t *testing.T) {
	b := pollingBell{Bell: transport.NewLocalBell(), every: time.Millisecond}
	armed := b.Arm()
	b.Wait(armed, time.Hour) // returns: the test would time out otherwise
	b.Disarm()
}

func TestFabricStubOrOpen(t *testing.T) {
	_, err := openFabric(fabric.Config{Rank: 0, NPEs: 1, Provider: "no-such-provider", Logger: slog.New(slog.DiscardHandler)})
	switch {
	case fabric.Available && !errors.Is(err, errs.ErrBootstrap):
		t.Errorf("unknown libfabric provider: %v", err)
	case !fabric.Available && (!errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), "goshmem_fabric")):
		t.Errorf("fabric in a build without it: %v", err)
	}
}
