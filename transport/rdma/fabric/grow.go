//go:build cgo && goshmem_fabric

package fabric

/*
#include "gf.h"
*/
import "C"

import (
	"sync/atomic"
	"unsafe"

	"github.com/goshmem/shmem/internal/errs"
)

// A heap that grows: Config.Heap may be the first part of a larger
// reservation (its capacity), mapped further as the world's heap grows.
// GrowHeap registers the grown heap with the NIC and puts the new key in
// this node's Address; the peers, once they have that Address (the world
// exchanges it after the growth is agreed), move their paths to it with
// UpdatePeers.
//
// Each growth registers the whole heap so far, not just the new part: a
// transfer then never spans two registrations (no splitting of puts at a
// segment boundary) and a peer needs one key, so a put into a grown part
// costs what one into the first does. The older registrations stay until
// Close: a peer may still have operations in flight that carry an older
// key (the growth agreement does not quiet anyone). Doubling, the bytes
// registered in all are at most twice the final heap.

// window is a peer's registered heap as this node addresses it: shared by
// every path to that peer, read on every operation without a lock. key is
// stored before size, so an operation that saw the new size uses the new
// key; one that saw the old size may use either, and both registrations
// cover it.
type window struct {
	size atomic.Int64
	key  atomic.Uint64
}

// growKeyBase is where the requested keys of the heap's later
// registrations start (1 is the first heap's, 2 the bounce buffers', 3
// the statics region's, 1<<32 and up local registrations); providers that
// pick keys ignore it.
const growKeyBase = 1 << 16

// HeapSize is how many bytes of this node's heap are registered.
func (n *Node) HeapSize() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.heapLen
}

// GrowHeap registers the first size bytes of the heap (Config.Heap
// extended within its capacity) with the NIC, and makes Address carry the
// new size and key. The caller has mapped those bytes read/write already:
// a provider that pins memory (verbs) cannot register a reservation that
// is not mapped yet, and a peer may write there as soon as it has the key.
// Growing to a size already registered does nothing. It fails with
// errs.ErrInvalidArgument beyond the heap's capacity, errs.ErrOutOfMemory
// when the provider refuses the registration, errs.ErrFinalized after
// Close; the heap stays as it was.
func (n *Node) GrowHeap(size int) error {
	n.growMu.Lock() // one registration at a time; Address is not held up
	defer n.growMu.Unlock()
	n.mu.Lock()
	have := n.heapLen
	n.mu.Unlock()
	if size <= have {
		return nil
	}
	if size > cap(n.cfg.Heap) {
		return errs.New("fabric.GrowHeap", n.rank(), errs.NoPE, errs.ErrInvalidArgument,
			"heap of %d bytes cannot grow to %d: its reservation is %d", have, size, cap(n.cfg.Heap))
	}
	if err := n.enter("fabric.GrowHeap", errs.NoPE); err != nil {
		return err
	}
	var mr *C.struct_fid_mr
	var key C.uint64_t
	base := unsafe.Pointer(unsafe.SliceData(n.cfg.Heap)) // not Go memory: see Config.Heap
	rc := C.gf_mr_reg_heap(n.c, base, C.size_t(size), C.uint64_t(growKeyBase+len(n.heapMRs)), &mr, &key)
	if rc == 0 {
		// Recorded inside the node's read side, so that teardown, which
		// runs under its write side, sees it.
		n.heapMRs = append(n.heapMRs, mr)
	}
	n.exit()
	if rc != 0 {
		return errs.New("fabric.GrowHeap", n.rank(), errs.NoPE, errs.ErrOutOfMemory,
			"fi_mr_reg of the %d-byte heap: %s", size, fiStrerror(int(rc)))
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	a, err := DecodeAddress(n.self)
	if err != nil {
		return err // cannot happen for an address this node made
	}
	a.HeapSize, a.Key = uint64(size), uint64(key)
	b, err := a.MarshalBinary()
	if err != nil {
		return err
	}
	n.self, n.heapLen = b, size
	return nil
}

// UpdatePeers takes the peers' Addresses after their heaps grew (peers[r]
// is rank r's, nil for a rank to leave as it is) and moves each connected
// path to its peer's new registration: operations reach the grown heap
// from then on. An Address must be the connected peer's (rank, provider,
// heap base, statics region, which never grows) and must not shrink its
// heap; a bad entry is refused with errs.ErrInvalidArgument naming its
// rank, after the entries before it took effect. A rank not connected is
// refused too.
func (n *Node) UpdatePeers(peers [][]byte) error {
	if len(peers) > n.cfg.NPEs {
		return errs.New("fabric.UpdatePeers", n.rank(), errs.NoPE, errs.ErrInvalidArgument, "%d addresses for %d PEs", len(peers), n.cfg.NPEs)
	}
	for r, b := range peers {
		if b == nil {
			continue
		}
		if err := n.updatePeer(r, b); err != nil {
			return err
		}
	}
	return nil
}

func (n *Node) updatePeer(r int, b []byte) error {
	bad := func(format string, args ...any) error {
		return errs.New("fabric.UpdatePeers", n.rank(), r, errs.ErrInvalidArgument, format, args...)
	}
	a, err := DecodeAddress(b)
	if err != nil {
		return bad("%v", err)
	}
	n.mu.Lock()
	p := n.paths[r]
	n.mu.Unlock()
	switch {
	case p == nil:
		return bad("PE %d is not connected", r)
	case a.Rank != r:
		return bad("address of rank %d at index %d", a.Rank, r)
	case a.Provider != n.prov:
		return bad("peer runs provider %q, this node %q", a.Provider, n.prov)
	case p.base != 0 && a.HeapBase != p.base:
		return bad("heap moved from %#x to %#x", p.base, a.HeapBase)
	case int64(a.HeapSize) < p.win.size.Load():
		return bad("heap of %d bytes shrank to %d", p.win.size.Load(), a.HeapSize)
	case a.StaticsSize != p.st.size || a.StaticsKey != p.st.key || (p.st.base != 0 && a.StaticsBase != p.st.base):
		// Paths keep the region of Connect and read it without a lock.
		return bad("statics region of %d bytes (key %#x) became %d bytes at %#x (key %#x)",
			p.st.size, p.st.key, a.StaticsSize, a.StaticsBase, a.StaticsKey)
	}
	// Concurrent UpdatePeers calls are the caller's to order (the world
	// makes them in its collective order).
	p.win.key.Store(a.Key)
	p.win.size.Store(int64(a.HeapSize))
	return nil
}

// closeGrowth releases the later heap registrations; the caller holds the
// node's write side and has closed the endpoint (or never opened it), so
// nothing uses them any more.
func (n *Node) closeGrowth() {
	for _, mr := range n.heapMRs {
		C.gf_mr_close(mr)
	}
	n.heapMRs = nil
}
