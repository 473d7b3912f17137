//go:build cgo && goshmem_fabric

package fabric

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
)

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

// TestPeerFailedEndsInFlight: a Get and a fetching atomic in flight to a
// peer that never answers (its process stopped, connections open) end
// with ErrPEFailed naming it as soon as PeerFailed is called, though
// OpTimeout is a minute (the test's -timeout proves the promptness). Their
// slots stay reserved until the late completions arrive, and the Get's
// dst is not written by them.
func TestPeerFailedEndsInFlight(t *testing.T) {
	n, peer, p := stoppedPeer(t)
	dst := make([]byte, 64)
	for i := range dst {
		dst[i] = 0xAA
	}
	res := inFlight(n, func() error { return p.Get(dst, 0) }, func() error {
		_, err := p.Atomic(transport.AtomicFetchAdd, 8, 64, 1, 0)
		return err
	})
	n.PeerFailed(1)
	for k := 0; k < 2; k++ {
		expectFailed(t, <-res, 1)
	}
	if free := len(n.free); free != n.cfg.Slots-2 {
		t.Errorf("%d slots free while 2 abandoned operations are in flight, want %d", free, n.cfg.Slots-2)
	}
	peer.resume(t) // the late completions come now and free the slots
	for len(n.free) < n.cfg.Slots {
		runtime.Gosched()
	}
	for i, b := range dst {
		if b != 0xAA {
			t.Fatalf("dst[%d] = %#x written after the Get returned", i, b)
		}
	}
}

// TestPeerLeftEndsInFlight: a fetching atomic in flight to a peer whose
// process then ends is not failed by rxm when the connection breaks (it
// would wait out OpTimeout, a minute here); PeerLeft, the world's word
// that the peer finalized, ends it at once with ErrPEFailed naming the
// peer and its Finalize, and later operations fail alike. A departure is
// not a failure: anyFailed stays unset.
func TestPeerLeftEndsInFlight(t *testing.T) {
	n, peer, p := stoppedPeer(t)
	res := inFlight(n, func() error {
		_, err := p.Atomic(transport.AtomicFetch, 8, 64, 0, 0)
		return err
	})
	peer.kill(t)
	n.PeerLeft(1)
	err := <-res
	expectFailed(t, err, 1)
	if err == nil || !strings.Contains(err.Error(), "PE 1 called Finalize") {
		t.Errorf("in flight: %v does not say PE 1 called Finalize", err)
	}
	expectFailed(t, p.Put(0, []byte{1}), 1)
	if e := n.anyFailed.Load(); e != nil {
		t.Errorf("a departure counted as a failure: %v", *e)
	}
	n.PeerFailed(1) // a later failure report changes nothing
	if err := p.Put(0, []byte{1}); err == nil || !strings.Contains(err.Error(), "called Finalize") {
		t.Errorf("after PeerFailed: %v, want the departure's error", err)
	}
}

// TestPeerFailedAbandonsGetNBI: a GetNBI in flight to a peer that never
// answers ends at the next Quiet with ErrPEFailed naming it once the peer
// is marked failed, and its late completion, which still frees the slot,
// does not write dst: the caller may be reusing it after that Quiet.
func TestPeerFailedAbandonsGetNBI(t *testing.T) {
	n, peer, p := stoppedPeer(t)
	dst := make([]byte, 64)
	for i := range dst {
		dst[i] = 0xAA
	}
	if err := p.GetNBI(dst, 0); err != nil {
		t.Fatal(err)
	}
	n.PeerFailed(1)
	expectFailed(t, n.Engine().Quiet(), 1)
	peer.resume(t) // the late completion comes now and frees the slot
	for len(n.free) < n.cfg.Slots {
		runtime.Gosched()
	}
	for i, b := range dst {
		if b != 0xAA {
			t.Fatalf("dst[%d] = %#x written after Quiet reported the failure", i, b)
		}
	}
}

// TestCloseEndsInFlight: Close ends a Get waiting on a peer that never
// answers with ErrFinalized, after the endpoint is closed.
func TestCloseEndsInFlight(t *testing.T) {
	n, _, res := getFromStoppedPeer(t, false)
	n.Close()
	if err := <-res; !errors.Is(err, errs.ErrFinalized) {
		t.Fatalf("Get in flight at Close: %v", err)
	}
}

// TestBigGetWaitsForItsCompletion: a Get larger than BounceSize reads into
// the caller's buffer directly, so PeerFailed does not end it (the NIC
// could still write dst); it ends with the provider's error when the peer
// process dies and its connections break.
func TestBigGetWaitsForItsCompletion(t *testing.T) {
	n, peer, res := getFromStoppedPeer(t, true)
	n.PeerFailed(1)
	select {
	case err := <-res:
		t.Fatalf("big Get ended before its completion: %v", err)
	default:
	}
	peer.kill(t)
	expectFailed(t, <-res, 1)
}

// getFromStoppedPeer opens node 0, connects a peer process, stops it and
// returns once a Get from it is in flight (64 bytes, or with big four
// bounce buffers' worth, read straight into the caller's buffer); res
// receives the Get's error.
func getFromStoppedPeer(t *testing.T, big bool) (n *Node, peer *peerProc, res chan error) {
	t.Helper()
	n, peer, p := stoppedPeer(t)
	size := 64
	if big {
		size = 4 * n.cfg.BounceSize
	}
	return n, peer, inFlight(n, func() error { return p.Get(make([]byte, size), 0) })
}

// stoppedPeer opens node 0, connects a peer process, checks the path with
// a Get and stops the peer: from then on it answers nothing, its
// connections open.
func stoppedPeer(t *testing.T) (*Node, *peerProc, *path) {
	t.Helper()
	n := openZero(t)
	peer := startPeerProc(t, n)
	p := n.paths[1]
	got := make([]byte, 8)
	if err := p.Get(got, 8); err != nil || got[0] != 8 || got[7] != 15 { // the peer's heap holds byte(i)
		t.Fatalf("Get from the live peer: %v %v", got, err)
	}
	peer.stop(t)
	return n, peer, p
}

// inFlight starts ops towards PE 1 and returns once each is posted (from
// then on they wait for completions); the channel gets their errors.
func inFlight(n *Node, ops ...func() error) chan error {
	res := make(chan error, len(ops))
	base := n.eng.issued[1].Load()
	for _, op := range ops {
		go func() { res <- op() }()
	}
	for n.eng.issued[1].Load() < base+uint64(len(ops)) {
		runtime.Gosched()
	}
	return res
}

// openZero opens node 0 of a 2-node world whose waits would last a minute.
func openZero(t *testing.T) *Node {
	t.Helper()
	prov, node := testProvider()
	n, err := Open(Config{Rank: 0, NPEs: 2, Heap: mmapHeap(t, 4096), Provider: prov, Node: node,
		OpTimeout: time.Minute, Logger: quietLog()})
	if errors.Is(err, errs.ErrBootstrap) {
		t.Skipf("libfabric provider %q unusable here: %v", prov, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

func expectFailed(t *testing.T, err error, peer int) {
	t.Helper()
	var e *errs.Error
	if !errors.Is(err, errs.ErrPEFailed) || !errors.As(err, &e) || e.Target != peer {
		t.Errorf("want ErrPEFailed naming PE %d, got %v", peer, err)
	}
}
