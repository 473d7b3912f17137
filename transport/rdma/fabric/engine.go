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
	"sync/atomic"
	"time"

	"github.com/goshmem/shmem/internal/errs"
)

// engine completes the operations of its paths: the node's engine those
// of the node's paths, a stream's (stream.go) those of the stream's.
//
// Completion is counted, not tracked per operation: the engine's endpoint
// has its own write counter (puts, non-fetching atomics, signals;
// delivery-complete) and read counter (gets, fetching atomics), which
// advance as operations finish, and Quiet waits until each reaches the
// number posted. Fence costs nothing at once: it starts a new epoch, and
// the first write to a path after it first waits for the engine's earlier
// writes if that path has any outstanding.
type engine struct {
	n  *Node
	ep *C.gf_ep // C memory: the node's main endpoint, or the stream's own
	st *stream  // nil for the node's engine

	// issued counts operations posted towards the write (0) and read (1)
	// counters, lost those that timed out and will never be counted, and
	// errSeen the counter errors already reported by Quiet.
	issued  [2]atomic.Uint64
	lost    [2]atomic.Uint64
	errSeen [2]atomic.Uint64

	inflight   atomic.Int64 // slots posted by the engine's paths and not yet released
	nbiPending atomic.Int64
	nbiWake    wake // broadcast when a GetNBI finishes or a path fails
	asyncErr   atomic.Pointer[error]
	fenceEpoch atomic.Uint64
	wseq       atomic.Uint64 // sequence number of the last write posted (path.lastW)
	wdone      atomic.Uint64 // every write up to this sequence number is complete
	// closed is set, under the node's write side, when the stream is
	// destroyed: from then on its endpoint may be gone (enter).
	closed atomic.Bool
}

// enter is the node's enter for an operation on the engine's endpoint:
// it also refuses once the engine's stream is destroyed.
func (e *engine) enter(op string, peer int) error {
	if err := e.n.enter(op, peer); err != nil {
		return err
	}
	if e.closed.Load() {
		e.n.exit()
		return errs.New(op, e.n.rank(), peer, errs.ErrFinalized, "context destroyed")
	}
	return nil
}

// each calls f on every path of the engine until f returns false.
func (e *engine) each(f func(*path) bool) {
	if e.st != nil {
		if all := e.st.all.Load(); all != nil {
			for _, p := range *all {
				if !f(p) {
					return
				}
			}
		}
		return
	}
	n := e.n
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, p := range n.paths {
		if p != nil && !f(p) {
			return
		}
	}
}

// Fence orders, per peer, the writes issued before it ahead of those after.
func (e *engine) Fence() error {
	e.fenceEpoch.Add(1)
	return nil
}

// Quiet returns when every operation posted on this engine before it is
// complete at its target and every GetNBI has filled its buffer. It fails
// with errs.ErrTimeout (naming the peers with outstanding writes) after
// OpTimeout, or with the first asynchronous failure since the last Quiet.
// After a peer failed it still waits for the GetNBIs from live peers, and
// those from the failed peer never write their buffers after it returns.
func (e *engine) Quiet() error {
	err := e.quietWrites("Quiet")
	if err == nil {
		err = e.waitCounter(1, "Quiet")
	}
	if (err == nil || errors.Is(err, errs.ErrPEFailed)) && e.nbiPending.Load() > 0 {
		err = errs.Join(err, e.waitNBI())
	}
	if ae := e.asyncErr.Swap(nil); ae != nil {
		err = errs.Join(*ae, err)
	}
	return err
}

// Close closes the node (the node's engine) or destroys the stream.
func (e *engine) Close() error {
	if e.st != nil {
		return e.st.Close()
	}
	return e.n.Close()
}

// quietWrites waits for every write posted so far and records that.
func (e *engine) quietWrites(op string) error {
	seq := e.wseq.Load()
	if err := e.waitCounter(0, op); err != nil {
		return err
	}
	for {
		d := e.wdone.Load()
		if d >= seq || e.wdone.CompareAndSwap(d, seq) {
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
func (e *engine) waitCounter(which int, op string) error {
	n := e.n
	var deadline time.Time
	for {
		if err := e.enter(op, errs.NoPE); err != nil {
			return err
		}
		k := C.gf_cntr_wait(n.c, e.ep, C.int(which), 0, -1) // counts first, then what was issued
		issued, lost := e.issued[which].Load(), e.lost[which].Load()
		for spin := 0; spin < spins && !reached(uint64(k.ok)+uint64(k.bad)+lost, issued); spin++ {
			k = C.gf_cntr_wait(n.c, e.ep, C.int(which), 0, -1)
		}
		ok, bad := uint64(k.ok), uint64(k.bad)
		if reached(ok+bad+lost, issued) { // modulo 2^32: see counts.go
			n.exit()
			return e.counterErrors(which, bad, op)
		}
		if err := e.failedOutstanding(which, op); err != nil {
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
			target, who := e.outstanding()
			return errs.New(op, n.rank(), target, errs.ErrTimeout, "%d of %d %s operations incomplete after %v (%s)",
				short(ok+bad+lost, issued), issued, [2]string{"write", "read"}[which], n.cfg.OpTimeout, who)
		}
		ms := min(left, 100*time.Millisecond).Milliseconds()
		C.gf_cntr_wait(n.c, e.ep, C.int(which), C.uint64_t(issued-lost-bad), C.int(max(ms, 1)))
		n.slept()
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
func (e *engine) failedOutstanding(which int, op string) error {
	var err error
	e.each(func(p *path) bool {
		if which == 0 && !p.dirty() {
			return true
		}
		if f := p.failed.Load(); f != nil {
			err = &errs.Error{Op: op, PE: e.n.rank(), Target: p.peer,
				Detail: fmt.Sprintf("%s operations outstanding with a failed PE", [2]string{"write", "read"}[which]), Err: *f}
			return false
		}
		return true
	})
	return err
}

// counterErrors reports operations that completed in error since the last
// report (inject writes and atomics have no other way to fail).
func (e *engine) counterErrors(which int, bad uint64, op string) error {
	for {
		seen := e.errSeen[which].Load()
		if reached(seen, bad) { // modulo 2^32, as every count (counts.go)
			return nil
		}
		if e.errSeen[which].CompareAndSwap(seen, bad) {
			target, who := e.outstanding()
			return errs.New(op, e.n.rank(), target, errs.ErrPEFailed, "%d %s operations failed (%s)",
				short(seen, bad), [2]string{"write", "read"}[which], who)
		}
	}
}

// outstanding names the peers with writes not known complete: the target
// when there is exactly one.
func (e *engine) outstanding() (int, string) {
	var peers []string
	target := errs.NoPE
	e.each(func(p *path) bool {
		if p.dirty() {
			peers = append(peers, fmt.Sprint(p.peer))
			target = p.peer
		}
		return true
	})
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
func (e *engine) waitNBI() error {
	n := e.n
	t := time.NewTimer(n.cfg.OpTimeout)
	defer t.Stop()
	for {
		woken := e.nbiWake.wait() // before the check: see wake
		if !e.nbiOutstanding() {
			return nil
		}
		select {
		case <-woken:
		case <-n.done:
			return errs.New("Quiet", n.rank(), errs.NoPE, errs.ErrFinalized, "node closed")
		case <-t.C:
			return errs.New("Quiet", n.rank(), errs.NoPE, errs.ErrTimeout, "%d GetNBI copies pending after %v", e.nbiPending.Load(), n.cfg.OpTimeout)
		}
	}
}

// nbiOutstanding reports whether a GetNBI may still write its buffer and
// Quiet must wait for it (see waitNBI).
func (e *engine) nbiOutstanding() bool {
	out := false
	e.each(func(p *path) bool {
		switch {
		case p.failed.Load() != nil:
			out = p.copying.Load() > 0
		default:
			out = p.nbi.Load() > 0
		}
		return !out
	})
	return out
}
