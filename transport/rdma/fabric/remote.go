//go:build cgo && goshmem_fabric

package fabric

/*
#include "gf.h"
*/
import "C"

import "github.com/goshmem/shmem/internal/errs"

// remoteWatchWait bounds each wait of the remote-write watcher in
// libfabric, and so how long Close may wait for it to leave.
const remoteWatchWait = 50 // ms

// RemoteWriteEvents reports whether the node counts the remote writes and
// atomics into its heap (FI_RMA_EVENT): then OnRemoteWrite can wake the
// heap's waiters. sockets and udp;ofi_rxd count them; verbs (the NIC
// writes memory without the CPU) and tcp;ofi_rxm do not, and a PE on them
// must re-check its waits periodically instead.
func (n *Node) RemoteWriteEvents() bool { return n.rmaEvent }

// OnRemoteWrite starts a goroutine that calls ring after remote writes or
// atomics have landed in the heap (several may share one call), until
// Close. It reports false, and starts nothing, when the node has no
// remote-write events or a watcher already runs.
func (n *Node) OnRemoteWrite(ring func()) bool {
	if !n.rmaEvent || ring == nil {
		return false
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.watched != nil || n.closed.Load() {
		return false
	}
	n.watched = make(chan struct{})
	go n.watchRemote(ring, n.watched)
	return true
}

// watchRemote waits on the remote-write counter and rings after every
// change; it holds the node's read side only while inside libfabric.
func (n *Node) watchRemote(ring func(), done chan struct{}) {
	defer close(done)
	var seen uint64
	for {
		if n.enter("OnRemoteWrite", errs.NoPE) != nil {
			return
		}
		k := C.gf_cntr_wait(n.c, &n.c.main, 2, C.uint64_t(seen+1), remoteWatchWait)
		n.slept()
		n.exit()
		if c := uint64(k.ok) + uint64(k.bad); c != seen {
			seen = c
			ring()
		}
	}
}
