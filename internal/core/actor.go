package core

import (
	"sync"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/goshmem/shmem/actors"
	"github.com/goshmem/shmem/pe"
)

// peActor runs the PE's pe.Actor, which owns its failure and exit state:
// every notice goes through deliver, one Step at a time, and only the
// effects Step returns write the state the hot path reads (nFailed and
// exited, atomics; state.failed, read once nFailed says a PE failed). The mailbox of a protoactor actor is one source of
// notices (peers); this PE's failure detectors are another (NotifyFailed).
// Both reach the same Step, also after Finalize began, when the
// protoactor actor is already stopped: a detector may still fire then,
// and its flood must still go out (see apply).
type peActor struct {
	mu sync.Mutex
	a  *pe.Actor
}

// deliver feeds m to the PE actor and applies its effects. The effects
// run after the actor's lock is released: the failure hook sends messages
// and must not be able to re-enter a locked actor.
func (s *state) deliver(m any) {
	s.actor.mu.Lock()
	effects := s.actor.a.Step(m)
	s.actor.mu.Unlock()
	for _, e := range effects {
		s.apply(e)
	}
}

// apply carries out one effect of the PE actor.
func (s *state) apply(e any) {
	switch e := e.(type) {
	case pe.Failed:
		reason := e.Reason
		if e.Link {
			s.failed.StoreLinkLost(e.Rank)
		}
		s.failed.Store(e.Rank, &reason)
		s.firstFailed.CompareAndSwap(0, int32(e.Rank)+1)
		s.nFailed.Add(1)
		s.raise()
		if s.agreed.Load() {
			s.log.Debug("PE left", "pe_left", e.Rank, "reason", reason)
		} else {
			s.log.Warn("PE failed", "failed", e.Rank, "reason", reason, "detected_by", e.Origin)
		}
		// The hook first: it tells the other PEs, and a waiter woken by
		// the ring may finalize at once, after which they may not hear.
		if s.cfg.OnFailure != nil {
			s.cfg.OnFailure(e.Rank, reason, e.Origin, e.Link)
		}
		if !s.agreed.Load() {
			s.failureCalls.failed(e.Rank, reason)
		}
		s.changed()
	case pe.LinkLost:
		s.failed.StoreLinkLost(e.Rank)
		s.changed()
	case pe.Exited:
		s.exited.Store(&exitInfo{rank: e.Rank, status: e.Status})
		s.raise()
		close(s.exitKnown)
		s.log.Info("global exit", "by", e.Rank, "status", e.Status)
		s.changed()
		if s.cfg.OnGlobalExit != nil {
			s.cfg.OnGlobalExit(e.Rank, e.Status)
		}
	case pe.Send:
		s.send(e.To, e.Msg)
	}
}

// send hands msg to the PE actor of rank through the backend.
func (s *state) send(rank int, msg any) bool {
	if s.cfg.Send == nil {
		return false
	}
	return s.cfg.Send(rank, msg)
}

// actorProps returns the protoactor actor that takes notices from the
// rest of the world (decoded values, from other processes through the
// backend's control lane) into the PE actor.
func actorProps(s *state) *actor.Props {
	return actor.PropsFromFunc(func(ctx actor.Context) {
		switch m := ctx.Message().(type) {
		case *actors.PEFailed, *actors.GlobalExit:
			s.deliver(m)
		case PeerLeft:
			if s.cfg.OnPeerLeft != nil {
				s.cfg.OnPeerLeft(m.Rank)
			}
			if m.Rank == coordinatorPE && m.Rank != s.cfg.Rank {
				// Its Finalize has ended, agreed or not (it gave up at
				// its operation timeout): agreements waiting for the
				// coordinator's answer learn it here (AgreeChecked).
				s.coordLeft.Store(true)
				s.changed()
			}
		}
	})
}

// PeerLeft tells the PE actor that PE Rank left the world on purpose: it
// called Finalize, and its control link ended with its goodbye. A backend
// sends it to the actor (PEActor) behind the notices that link carried,
// so Config.OnPeerLeft runs after the PE recorded the failures they told
// of: a wait that a departure ends then names the failure, the cause,
// rather than the PE that finalized because of it. The departure of the
// coordinator's PE (rank 0) ends the agreements still waiting for its
// answer (AgreeChecked).
type PeerLeft struct{ Rank int }

// NotifyFailed records that rank has failed, detected by this PE. Backends
// call it from their failure detectors, from any goroutine, also after this
// PE finalized.
func (p *PE) NotifyFailed(rank int, reason string) {
	p.s.deliver(&actors.PEFailed{Rank: rank, Reason: reason, Origin: p.s.cfg.Rank})
}
