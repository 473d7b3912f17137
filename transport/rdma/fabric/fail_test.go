//go:build cgo && goshmem_fabric

package fabric

import (
	"errors"
	"testing"
	"time"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
)

func TestClosedNodeFinalized(t *testing.T) {
	w := newWorld(t, 2, 4096, nil)
	p := w.path(t, 0, 1)
	w.nodes[0].Close()
	if err := p.Put(0, []byte{1}); !errors.Is(err, errs.ErrFinalized) {
		t.Fatalf("Put on a closed node: %v", err)
	}
	if err := p.Get(make([]byte, 8), 0); !errors.Is(err, errs.ErrFinalized) {
		t.Fatalf("Get on a closed node: %v", err)
	}
	if err := w.nodes[0].Engine().Quiet(); !errors.Is(err, errs.ErrFinalized) {
		t.Fatalf("Quiet on a closed node: %v", err)
	}
	if err := w.nodes[0].Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// TestClosedPeerFails: operations towards a peer whose node is gone fail
// (provider error or OpTimeout), name the peer, and never hang or panic.
func TestClosedPeerFails(t *testing.T) {
	w := newWorld(t, 2, 4096, func(c *Config) { c.OpTimeout = 2 * time.Second })
	p := w.path(t, 0, 1)
	if err := p.Put(0, []byte{1}); err != nil { // connect while alive
		t.Fatal(err)
	}
	if err := w.nodes[0].Engine().Quiet(); err != nil {
		t.Fatal(err)
	}
	w.nodes[1].Close()
	_, err := p.Atomic(transport.AtomicFetchAdd, 8, 0, 1, 0)
	if err == nil {
		err = w.nodes[0].Engine().Quiet()
	}
	if !errors.Is(err, errs.ErrPEFailed) && !errors.Is(err, errs.ErrTimeout) {
		t.Fatalf("atomic on a closed peer: %v", err)
	}
	var e *errs.Error
	if !errors.As(err, &e) || e.Target != 1 {
		t.Fatalf("error does not name PE 1: %v", err)
	}
	if err := p.Put(0, []byte{1}); err == nil {
		t.Fatal("Put to a failed peer succeeded")
	}
}

func TestPeerFailedAndBadConnect(t *testing.T) {
	w := newWorld(t, 2, 4096, nil)
	w.nodes[0].PeerFailed(1)
	p := w.path(t, 0, 1)
	if err := p.Put(0, []byte{1}); !errors.Is(err, errs.ErrPEFailed) {
		t.Fatalf("Put after PeerFailed: %v", err)
	}
	if _, err := w.nodes[0].Path(5); !isInvalid(err) {
		t.Fatalf("Path to rank 5 of 2: %v", err)
	}
	a := w.nodes[1].Address()
	if err := w.nodes[0].Connect([][]byte{nil, a}); !isInvalid(err) {
		t.Fatalf("connecting rank 1 twice: %v", err)
	}
	if err := w.nodes[0].Connect([][]byte{a}); !isInvalid(err) {
		t.Fatalf("rank 1's address at index 0: %v", err)
	}
	if err := w.nodes[0].Connect([][]byte{a[:10]}); !isInvalid(err) {
		t.Fatalf("truncated address: %v", err)
	}
	if _, err := Open(Config{Rank: 0, NPEs: 1, Provider: "no-such-provider", Logger: quietLog()}); !errors.Is(err, errs.ErrBootstrap) {
		t.Fatalf("unknown provider: %v", err)
	}
}

// TestFailedPeerEndsWaits: operations towards a peer that is gone may
// never complete (rxm keeps its queue full retrying the connection); once
// the peer is marked failed, Put and Quiet end with ErrPEFailed naming it
// instead of waiting for OpTimeout (an hour here).
func TestFailedPeerEndsWaits(t *testing.T) {
	w := newWorld(t, 3, 4096, func(c *Config) { c.OpTimeout = time.Hour })
	p2 := w.path(t, 0, 2)
	if err := p2.Put(0, []byte{1}); err != nil { // connect while alive
		t.Fatal(err)
	}
	if err := w.nodes[0].Engine().Quiet(); err != nil {
		t.Fatal(err)
	}
	w.nodes[2].Close()
	marked := make(chan struct{})
	go func() { w.nodes[0].PeerFailed(2); close(marked) }() // like the world's failure detector
	err := p2.Put(0, make([]byte, 1000))
	<-marked
	if err == nil {
		err = w.nodes[0].Engine().Quiet()
	}
	var e *errs.Error
	if !errors.Is(err, errs.ErrPEFailed) || !errors.As(err, &e) || e.Target != 2 {
		t.Fatalf("Put and Quiet towards a failed PE: %v", err)
	}
}
