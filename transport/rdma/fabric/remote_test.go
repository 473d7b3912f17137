//go:build cgo && goshmem_fabric

package fabric

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
)

// TestRemoteWriteRings: on a provider with remote-write events (sockets),
// a put and an atomic into a node's heap each lead to a ring there, after
// which the value is in the heap: a waiter woken by the ring sees it.
func TestRemoteWriteRings(t *testing.T) {
	w := newWorld(t, 2, 4096, func(c *Config) { c.Provider, c.Node = "sockets", "127.0.0.1" })
	if !w.nodes[1].RemoteWriteEvents() {
		t.Skipf("provider %s offers no FI_RMA_EVENT here", w.nodes[1].Provider())
	}
	rings := make(chan struct{}, 1)
	ring := func() {
		select {
		case rings <- struct{}{}:
		default:
		}
	}
	if !w.nodes[1].OnRemoteWrite(ring) {
		t.Fatal("OnRemoteWrite refused on a node with remote-write events")
	}
	if w.nodes[1].OnRemoteWrite(ring) {
		t.Fatal("a second watcher started")
	}
	p := w.path(t, 0, 1)
	word := func() uint64 { return binary.LittleEndian.Uint64(w.heaps[1][64:]) }
	if err := p.Put(64, binary.LittleEndian.AppendUint64(nil, 41)); err != nil {
		t.Fatal(err)
	}
	for word() != 41 {
		<-rings // no ring until the word is there would hang the test
	}
	if err := p.AtomicPost(transport.AtomicFetchAdd, 8, 64, 1); err != nil {
		t.Fatal(err)
	}
	for word() != 42 {
		<-rings
	}
}

// TestNoRemoteWriteEvents: without FI_RMA_EVENT (tcp;ofi_rxm) the node
// says so and OnRemoteWrite starts nothing, so the world falls back to
// re-checking its waits.
func TestNoRemoteWriteEvents(t *testing.T) {
	w := newWorld(t, 1, 4096, func(c *Config) { c.Provider, c.Node = "tcp;ofi_rxm", "127.0.0.1" })
	if w.nodes[0].RemoteWriteEvents() {
		t.Skip("tcp;ofi_rxm counts remote writes in this libfabric")
	}
	if w.nodes[0].OnRemoteWrite(func() {}) {
		t.Fatal("OnRemoteWrite started a watcher without remote-write events")
	}
}

// TestSetRank: a node opened before its rank was known takes it later;
// its address names the new rank, which a peer's Connect then accepts at
// that index, and the rank cannot change once a peer is connected.
func TestSetRank(t *testing.T) {
	prov, node := testProvider()
	open := func() *Node {
		n, err := Open(Config{Rank: 0, NPEs: 2, Heap: mmapHeap(t, 4096), Provider: prov, Node: node, Logger: quietLog()})
		if errors.Is(err, errs.ErrBootstrap) {
			t.Skipf("libfabric provider %q unusable here: %v", prov, err)
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Close() })
		return n
	}
	a, b := open(), open()
	if err := b.SetRank(2); !isInvalid(err) {
		t.Fatalf("rank 2 of 2: %v", err)
	}
	if err := b.SetRank(1); err != nil {
		t.Fatal(err)
	}
	if got, err := DecodeAddress(b.Address()); err != nil || got.Rank != 1 {
		t.Fatalf("address after SetRank(1): rank %d, %v", got.Rank, err)
	}
	if err := a.Connect([][]byte{nil, b.Address()}); err != nil {
		t.Fatal(err)
	}
	if err := b.Connect([][]byte{a.Address()}); err != nil {
		t.Fatal(err)
	}
	p, err := a.Path(1)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Put(8, []byte("renamed")); err != nil {
		t.Fatal(err)
	}
	if err := a.Engine().Quiet(); err != nil {
		t.Fatal(err)
	}
	if got := string(b.cfg.Heap[8:15]); got != "renamed" {
		t.Fatalf("put through the renamed node's address landed as %q", got)
	}
	if err := b.SetRank(0); !isInvalid(err) {
		t.Fatalf("SetRank after Connect: %v", err)
	}
}
