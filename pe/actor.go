package pe

import (
	"github.com/asynkron/protoactor-go/actor"

	"github.com/goshmem/shmem/actors"
)

// actorProps returns the PE actor: it takes failure and exit notices from
// the rest of the world and turns them into the state the hot path reads
// (atomics), then rings the bell so that blocked waits notice at once.
// Messages arrive decoded (from another process through the backend's
// control lane), in the order they were sent to this actor: a failure a
// backend detects after a GlobalExit arrived is ignored, since the exit is
// what ended the peer.
func actorProps(s *state) *actor.Props {
	return actor.PropsFromFunc(func(ctx actor.Context) {
		switch m := ctx.Message().(type) {
		case *actors.PEFailed:
			if s.exited.Load() != nil {
				return
			}
			s.markFailed(m.Rank, m.Reason, m.Origin)
		case *actors.GlobalExit:
			if s.cfg.Rank == 0 && m.Rank != 0 && s.exited.Load() == nil {
				// Rank 0 reaches every PE (the multi-process backend
				// checks it at start-up); the caller may not (a relayed
				// pair), so rank 0 passes the notice on once.
				for r := 1; r < s.cfg.NPEs; r++ {
					if r != m.Rank {
						s.cfg.Send(r, m)
					}
				}
			}
			s.markExited(m.Rank, m.Status)
		}
	})
}

// markFailed records that rank failed, as origin detected it. Only the
// first record counts: it wakes the waits and runs Config.OnFailure once,
// so a notice that arrives again (flooding, several detectors) ends here.
func (s *state) markFailed(rank int, reason string, origin int) {
	if rank < 0 || rank >= len(s.failed) || rank == s.cfg.Rank {
		return
	}
	if s.failed[rank].CompareAndSwap(nil, &reason) {
		s.nFailed.Add(1)
		s.log.Warn("PE failed", "failed", rank, "reason", reason, "detected_by", origin)
		// The hook first: it tells the other PEs, and a waiter woken by
		// the ring may finalize at once, after which they may not hear.
		if s.cfg.OnFailure != nil {
			s.cfg.OnFailure(rank, reason, origin)
		}
		s.bell.Ring()
	}
}

func (s *state) markExited(rank, status int) {
	if s.exited.CompareAndSwap(nil, &exitInfo{rank: rank, status: status}) {
		close(s.exitKnown)
		s.log.Info("global exit", "by", rank, "status", status)
		s.bell.Ring()
		if s.cfg.OnGlobalExit != nil {
			s.cfg.OnGlobalExit(rank, status)
		}
	}
}

// NotifyFailed records that rank has failed, detected by this PE. Backends
// call it from their failure detectors, from any goroutine, also after this
// PE finalized: it updates the PE's state directly rather than messaging its
// actor, which Finalize stops.
func (p *PE) NotifyFailed(rank int, reason string) {
	p.s.markFailed(rank, reason, p.s.cfg.Rank)
}
