//go:build cgo && goshmem_fabric

package fabric

/*
#include "gf.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/goshmem/shmem/internal/errs"
)

// engine completes the operations of every path of one node.
//
// Completion is counted, not tracked per operation: the endpoint's write
// counter (puts, non-fetching atomics, signals; delivery-complete) and read
// counter (gets, fetching atomics) advance as operations finish, and Quiet
// waits until each reaches the number posted. Fence costs nothing at once:
// it starts a new epoch, and the first write to a path after it first waits
// for the node's earlier writes if that path has any outstanding.
type engine struct{ n *Node }

// Fence orders, per peer, the writes issued before it ahead of those after.
func (e *engine) Fence() error {
	e.n.fenceEpoch.Add(1)
	return nil
}

// Quiet returns when every operation posted before it is complete at its
// target and every GetNBI has filled its buffer. It fails with
// errs.ErrTimeout (naming the peers with outstanding writes) after
// OpTimeout, or with the first asynchronous failure since the last Quiet.
// After a peer failed it still waits for the GetNBIs from live peers, and
// those from the failed peer never write their buffers after it returns.
func (e *engine) Quiet() error {
	n := e.n
	err := n.quietWrites("Quiet")
	if err == nil {
		err = n.waitCounter(1, "Quiet")
	}
	if (err == nil || errors.Is(err, errs.ErrPEFailed)) && n.nbiPending.Load() > 0 {
		err = errors.Join(err, n.waitNBI())
	}
	if ae := n.asyncErr.Swap(nil); ae != nil {
		err = errors.Join(*ae, err)
	}
	return err
}

// Close closes the node: see Node.Close.
func (e *engine) Close() error { return e.n.Close() }

// quietWrites waits for every write posted so far and records that.
func (n *Node) quietWrites(op string) error {
	seq := n.wseq.Load()
	if err := n.waitCounter(0, op); err != nil {
		return err
	}
	for {
		d := n.wdone.Load()
		if d >= seq || n.wdone.CompareAndSwap(d, seq) {
			return nil
		}
	}
}

// spins is how many times waitCounter reads a counter (each read drives a
// manual-progress provider) before it sleeps in fi_cntr_wait: a loopback or
// RDMA round trip usually ends within them, and sleeping costs a wake-up.
const spins = 200

// waitCounter waits until counter which (0 write, 1 read) has counted every
// operation posted towards it, in waits of at most 100 ms so that Close
// never waits long for a caller inside libfabric.
func (n *Node) waitCounter(which int, op string) error {
	var deadline time.Time
	for {
		if err := n.enter(op, errs.NoPE); err != nil {
			return err
		}
		k := C.gf_cntr_wait(n.c, C.int(which), 0, -1) // counts first, then what was issued
		issued, lost := n.issued[which].Load(), n.lost[which].Load()
		for spin := 0; spin < spins && uint64(k.ok)+uint64(k.bad)+lost < issued; spin++ {
			k = C.gf_cntr_wait(n.c, C.int(which), 0, -1)
		}
		ok, bad := uint64(k.ok), uint64(k.bad)
		if ok+bad+lost >= issued {
			n.exit()
			return n.counterErrors(which, bad, op)
		}
		if err := n.failedOutstanding(which, op); err != nil {
			n.exit()
			return err
		}
		now := time.Now()
		if deadline.IsZero() {
			deadline = now.Add(n.cfg.OpTimeout)
		}
		left := deadline.Sub(now)
		if left <= 0 {
			n.exit()
			target, who := n.outstanding()
			return errs.New(op, n.rank(), target, errs.ErrTimeout, "%d of %d %s operations incomplete after %v (%s)",
				issued-ok-bad-lost, issued, [2]string{"write", "read"}[which], n.cfg.OpTimeout, who)
		}
		ms := min(left, 100*time.Millisecond).Milliseconds()
		C.gf_cntr_wait(n.c, C.int(which), C.uint64_t(issued-lost-bad), C.int(max(ms, 1)))
		n.exit()
	}
}

// failedOutstanding ends a counter wait that a failed peer may hold up:
// a write to a failed PE (PeerFailed, or a failed completion) may never be
// counted, so waiting for it would last until OpTimeout. For writes it
// names a failed peer with outstanding writes; for reads, whose peers are
// not tracked, any failed peer. The operations stay uncounted, so every
// later wait on that counter fails the same way: after a PE failure the
// world is over for this PE's completion guarantees.
func (n *Node) failedOutstanding(which int, op string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, p := range n.paths {
		if p == nil || which == 0 && !p.dirty() {
			continue
		}
		if e := p.failed.Load(); e != nil {
			return &errs.Error{Op: op, PE: n.rank(), Target: p.peer,
				Detail: fmt.Sprintf("%s operations outstanding with a failed PE", [2]string{"write", "read"}[which]), Err: *e}
		}
	}
	return nil
}

// counterErrors reports operations that completed in error since the last
// report (inject writes and atomics have no other way to fail).
func (n *Node) counterErrors(which int, bad uint64, op string) error {
	for {
		seen := n.errSeen[which].Load()
		if bad <= seen {
			return nil
		}
		if n.errSeen[which].CompareAndSwap(seen, bad) {
			target, who := n.outstanding()
			return errs.New(op, n.rank(), target, errs.ErrPEFailed, "%d %s operations failed (%s)",
				bad-seen, [2]string{"write", "read"}[which], who)
		}
	}
}

// outstanding names the peers with writes not known complete: the target
// when there is exactly one.
func (n *Node) outstanding() (int, string) {
	var peers []string
	target := errs.NoPE
	n.mu.Lock()
	for r, p := range n.paths {
		if p != nil && p.dirty() {
			peers = append(peers, fmt.Sprint(r))
			target = r
		}
	}
	n.mu.Unlock()
	switch len(peers) {
	case 0:
		return errs.NoPE, "no peer with outstanding writes"
	case 1:
		return target, "outstanding writes to PE " + peers[0]
	}
	return errs.NoPE, "outstanding writes to PEs " + strings.Join(peers, ",")
}

// waitNBI waits for the GetNBI copies that the progress goroutine makes
// after their read completions: on a live path until all are made, on a
// failed one only for a copy under way (later ones are skipped, copyOut),
// since a dead peer may never complete its reads.
func (n *Node) waitNBI() error {
	t := time.NewTimer(n.cfg.OpTimeout)
	defer t.Stop()
	for {
		woken := n.nbiWake.wait() // before the check: see wake
		if !n.nbiOutstanding() {
			return nil
		}
		select {
		case <-woken:
		case <-n.done:
			return errs.New("Quiet", n.rank(), errs.NoPE, errs.ErrFinalized, "node closed")
		case <-t.C:
			return errs.New("Quiet", n.rank(), errs.NoPE, errs.ErrTimeout, "%d GetNBI copies pending after %v", n.nbiPending.Load(), n.cfg.OpTimeout)
		}
	}
}

// nbiOutstanding reports whether a GetNBI may still write its buffer and
// Quiet must wait for it (see waitNBI).
func (n *Node) nbiOutstanding() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, p := range n.paths {
		switch {
		case p == nil:
		case p.failed.Load() != nil:
			if p.copying.Load() > 0 {
				return true
			}
		case p.nbi.Load() > 0:
			return true
		}
	}
	return false
}
