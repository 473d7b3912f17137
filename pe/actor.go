// Package pe is the PE actor: the state machine that owns one PE's failure
// and exit state. Every notice that a PE failed or that the world ended
// (from a peer, from a failure detector of this process) goes through its
// Step, which decides what the notice changes and what follows from it:
// the state to publish to the PE's hot path, the hooks to run, the notices
// to pass on. It reaches no memory and no socket: the runtime that owns
// a live PE applies the effects Step returns, one notice at a time.
package pe

import (
	"github.com/goshmem/shmem/actors"
)

// Actor is one PE's failure and exit state. The zero value is not usable;
// use New. It is not safe for concurrent use: the runtime feeds it one
// message at a time.
type Actor struct {
	rank, npes int
	failed     []bool // by world rank
	exited     bool
}

// New returns the actor of PE rank in a world of npes PEs, with every PE
// alive and no exit.
func New(rank, npes int) *Actor {
	return &Actor{rank: rank, npes: npes, failed: make([]bool, npes)}
}

// Failed is an effect: record that Rank failed (Reason, as Origin detected
// it) where the hot path reads it, run the failure hook, then wake the
// PE's waits. Step returns it once per failed PE.
type Failed struct {
	Rank   int
	Reason string
	Origin int
	Link   bool // as actors.PEFailed's
}

// LinkLost is an effect: a notice with actors.PEFailed.Link came after
// another had recorded Rank failed (Failed.Link says the same for a first
// notice).
type LinkLost struct{ Rank int }

// Exited is an effect: record that Rank ended the world with Status,
// wake the PE's waits, then run the exit hook. Step returns it once.
type Exited struct{ Rank, Status int }

// Send is an effect: send Msg to the PE actor of world rank To.
type Send struct {
	To  int
	Msg any
}

// Step takes one message and returns its effects, in the order the runtime
// must apply them. It accepts:
//   - *actors.PEFailed: a peer's notice, or this PE's own detector's (Origin
//     is this PE). Only the first notice about a rank counts, but for a
//     later one with Link (LinkLost); notices about this PE
//     itself or ranks outside the world, and any after a GlobalExit,
//     change nothing.
//   - *actors.GlobalExit: some PE ended the world. Only the first counts.
//     Rank 0 reaches every PE (the multi-process backend checks it at
//     start-up) while the caller of GlobalExit may not (a relayed pair), so
//     rank 0 passes the first exit it hears from another PE on to every PE
//     but the caller and itself, before recording it.
//
// Anything else is ignored.
func (a *Actor) Step(m any) []any {
	switch m := m.(type) {
	case *actors.PEFailed:
		// After a GlobalExit, a peer's connection that ends is the exit
		// ending its process, not a failure: the notices arrive in the
		// order they were sent, so the exit came first.
		if a.exited || m.Rank < 0 || m.Rank >= a.npes || m.Rank == a.rank {
			return nil
		}
		if a.failed[m.Rank] {
			if m.Link {
				// A notice without Link came first; this one still tells
				// settle the peer did not leave on an exit.
				return []any{LinkLost{Rank: m.Rank}}
			}
			return nil
		}
		a.failed[m.Rank] = true
		return []any{Failed{Rank: m.Rank, Reason: m.Reason, Origin: m.Origin, Link: m.Link}}
	case *actors.GlobalExit:
		if a.exited {
			return nil
		}
		a.exited = true
		var out []any
		if a.rank == 0 && m.Rank != 0 {
			for r := 1; r < a.npes; r++ {
				if r != m.Rank {
					out = append(out, Send{To: r, Msg: &actors.GlobalExit{Rank: m.Rank, Status: m.Status}})
				}
			}
		}
		return append(out, Exited{Rank: m.Rank, Status: m.Status})
	}
	return nil
}
