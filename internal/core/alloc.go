package core

import (
	"errors"
	"fmt"
	"time"

	"github.com/goshmem/shmem/actors"
	"github.com/goshmem/shmem/heap"
	"github.com/goshmem/shmem/internal/actorsys"
	"github.com/goshmem/shmem/internal/coll"
	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/team"
)

// HeapOp runs one collective heap call through the PE's heap actor: every
// PE must call it with the same request in the same order. The actor
// proposes the request, the PEs agree through the coordinator (which also
// makes the call a synchronization point), and the actor judges the
// proposals and applies the request; the allocator being deterministic,
// every PE gets the same offset. A request that differs on any PE fails
// with ErrInvalidArgument on every PE, naming them. A PE that rejected its
// own arguments before getting here passes the zero Request: it joins the
// agreement (so the others fail with it instead of waiting, and every
// PE's collective order stays the same) and nothing is applied anywhere.
func (p *PE) HeapOp(op string, req heap.Request) (heap.Result, error) {
	if err := p.Check(op); err != nil {
		return heap.Result{}, err
	}
	if req.Kind != heap.KindAlloc {
		// Free and realloc complete the caller's puts into the object first.
		if err := p.Quiet(); err != nil {
			return heap.Result{}, err
		}
	}
	// The collective order is the heap actor's mailbox: one call at a time.
	p.s.collMu.Lock()
	defer p.s.collMu.Unlock()
	if err := p.s.world.Number(op, team.KindAlloc); err != nil {
		return heap.Result{}, err
	}
	before := p.s.cfg.Heap.Size()
	effects := p.s.heap.Step(heap.Begin{Op: op, Req: req})
	for len(effects) > 0 {
		switch e := effects[0].(type) {
		case heap.Grow:
			effects = p.s.heap.Step(heap.Grown{Err: p.growHeap(e.Size)})
		case heap.Propose:
			all, err := p.AgreeChecked(op, "heap", e.Seq, p.s.world.Members(), p.MyPE(), e.Payload, p.s.world)
			if errors.Is(err, errs.ErrTimeout) {
				// The others may still complete the allocation with this
				// PE's proposal, which this PE does not apply: TeamWorld
				// is given up, so that none of them runs another
				// operation with it (see coll.Team.GiveUp).
				p.s.world.GiveUp(op, err)
			}
			effects = p.s.heap.Step(heap.Agreed{Seq: e.Seq, Payloads: all, Err: err})
		case heap.Done:
			if after := p.s.cfg.Heap.Size(); after > before && p.s.cfg.Grown != nil {
				p.s.cfg.Grown(after)
			}
			return e.Result, e.Err
		default:
			effects = effects[1:]
		}
	}
	return heap.Result{}, errs.New(op, p.MyPE(), errs.NoPE, errs.ErrInvalidArgument, "the heap actor ended the call without a result")
}

// Agree is AgreeChecked without a peer check.
func (p *PE) Agree(op, domain string, seq uint64, members []int, me int, payload []byte) ([][]byte, error) {
	return p.AgreeChecked(op, domain, seq, members, me, payload, nil)
}

// AgreeChecked contributes payload to the gather round (domain, seq) of the group
// of world ranks members, where the caller is group rank me, and returns
// every member's payload in group order. The caller holds the collective
// order (CollectiveLock or HeapOp's own lock). While it waits it checks b's
// peers as a wait does (b may be nil: no check), and it ends with the
// PE's failures, the operation timeout and the deadlock verdict.
func (p *PE) AgreeChecked(op, domain string, seq uint64, members []int, me int, payload []byte, b coll.Blocked) ([][]byte, error) {
	if err := p.Check(op); err != nil {
		return nil, err
	}
	if len(members) == 1 {
		return [][]byte{payload}, nil
	}
	if block := p.s.cfg.Block; block != nil {
		defer block(domain, seq, len(members))()
	}
	g := &actors.Gather{Domain: domain, Seq: seq, Rank: me, N: len(members), Members: members, Payload: payload}
	answer, stop, err := actorsys.StartGather(p.s.cfg.System.Root, p.s.cfg.Coordinator, g, func() { p.s.blocks.gen.Add(1) })
	if err != nil {
		return nil, errs.New(op, p.MyPE(), errs.NoPE, errs.ErrInvalidArgument, "%v", err)
	}
	defer stop()
	if b == nil {
		b = groupWait{p: p, domain: domain, members: members}
	}
	w := p.startLong(op, b)
	defer p.endLong(w)
	// The wait sleeps until its next duty (a peer check, the timeouts,
	// the hang report) or until the PE's state changes (notices), never
	// on a fixed tick: the first look comes after checkFirst, as most
	// agreements are answered sooner.
	timer := time.NewTimer(checkFirst)
	defer timer.Stop()
	woken := p.s.wake.wait()
	var graceEnd time.Duration // set: a peer failed, the answer may be on its way
	for {
		select {
		case r := <-answer:
			return actorsys.Result(r, g.N, op, p.MyPE())
		case <-timer.C:
		case <-woken:
			timer.Stop()
		}
		select {
		case r := <-answer: // both were ready: the answer wins
			return actorsys.Result(r, g.N, op, p.MyPE())
		default:
		}
		woken = p.s.wake.wait() // before the looks: a change after them closes it
		left := p.s.cfg.Timeout - w.elapsed()
		if wait := p.answerGrace(w, &graceEnd, left); wait > 0 {
			if h := p.s.agreeSleeps; h != nil {
				h(wait)
			}
			timer.Reset(wait)
			continue
		}
		err := p.waitableUnder(op, w.verdict())
		if err == nil && p.coordinatorLeft() {
			// Its answers went out on its links before its goodbye, and
			// the grace above let them arrive: none is coming.
			err = errs.New(op, p.MyPE(), coordinatorPE, errs.ErrPEFailed,
				"PE %d, whose coordinator runs the world's agreements, left the world (its Finalize ended) without answering agreement %s with PEs %s",
				coordinatorPE, domain, coll.Ranges(members))
		}
		var sleep time.Duration
		if err == nil {
			sleep, err = w.step()
		}
		if err == nil && left < 0 {
			err = errs.New(op, p.MyPE(), errs.NoPE, errs.ErrTimeout, "no agreement from the coordinator within %v", p.s.cfg.Timeout)
		}
		if err != nil {
			select {
			case r := <-answer:
				if all, aerr := actorsys.Result(r, g.N, op, p.MyPE()); aerr == nil {
					return all, nil // completed meanwhile
				}
			default:
			}
			return nil, err
		}
		sleep = min(sleep, max(left, time.Millisecond))
		if h := p.s.agreeSleeps; h != nil {
			h(sleep)
		}
		timer.Reset(sleep)
	}
}

// agreeGrace is how long an agreement still waits for the coordinator's
// answer after a peer's failure is recorded. The coordinator decides the
// round: it answers every member at once when the last payload arrives,
// or aborts the round when it learns of a member's failure first. A member
// that got its answer may finish and leave (Finalize, then exit) while
// this PE's answer is still in flight, and its leaving, seen here first
// through gossip or a closed lane, must not turn an agreement that
// completed into a failure (a CI run: PE 2's Finalize reported PE 1, which
// had passed the same agreement and exited). The coordinator hears of a
// real failure as this PE does and then answers with the abort, so the
// grace runs out only when the coordinator cannot answer at all. Once
// coordinatorPE is recorded failed nobody will answer, and the wait ends
// at once, as before.
const agreeGrace = 2 * time.Second

// coordinatorPE is the world rank whose process runs the coordinator of
// a multi-process world (actors.Coordinator). An in-process world's
// coordinator outlives every PE; there, rank 0's failure only ends the
// grace early, and the coordinator's abort comes as fast.
const coordinatorPE = 0

// answerGrace says how long AgreeChecked keeps waiting for its answer
// when the only reason to stop is a recorded peer failure, or the
// departure of the coordinator's PE (whose last answers may still be on
// their way to this PE's receiver): the rest of the grace, at most left
// (the agreement's own timeout), and 0 when this PE itself ended, the
// wait's verdict applies, no peer failed and the coordinator's PE is
// there, the coordinator's PE failed, or the grace is over. end holds the
// grace's end on the wait's clock. The operation timeout waits for the
// grace: a PE that gives up Finalize while its coordinator's answer is on
// its way would be wrong.
func (p *PE) answerGrace(w *longWait, end *time.Duration, left time.Duration) time.Duration {
	if p.usable() != nil || w.verdict() != nil || (p.s.nFailed.Load() == 0 && !p.coordinatorLeft()) || p.s.failed.Load(coordinatorPE) != nil {
		return 0
	}
	el := w.elapsed()
	if *end == 0 {
		*end = el + agreeGrace
	}
	return min(*end-el, left)
}

// coordinatorLeft reports whether the coordinator's PE, another than this
// one, has left the world (PeerLeft).
func (p *PE) coordinatorLeft() bool { return p.s.coordLeft.Load() && p.MyPE() != coordinatorPE }

// groupWait is an agreement with no peer check (Finalize's: Finalize
// matches Finalize whatever the numbers).
type groupWait struct {
	p       *PE
	domain  string
	members []int
}

func (g groupWait) CheckPeers(string) error { return nil }
func (g groupWait) Waiting() string {
	return fmt.Sprintf("agreement %s with PEs %s", g.domain, coll.Ranges(g.members))
}

// Absent names, for Finalize's agreement, the members that have not
// called Finalize (their left word is clear); other agreements cannot
// tell.
func (g groupWait) Absent(op string) ([]int, string) {
	if g.domain != finalizeDomain {
		return nil, ""
	}
	var out []int
	for _, r := range g.members {
		if r == g.p.MyPE() {
			continue
		}
		if left, err := coll.Left(g.p, op, r); err == nil && !left {
			out = append(out, r)
		}
	}
	switch len(out) {
	case 0:
		return nil, ""
	case 1:
		return out, fmt.Sprintf("PE %d has not called Finalize", out[0])
	}
	return out, "PEs " + coll.Ranges(out) + " have not called Finalize"
}

// growHeap makes the first size bytes of the PE's heap usable through the
// backend (Config.Grow), before the allocation that needs them is agreed.
func (p *PE) growHeap(size int64) error {
	if p.s.cfg.Grow == nil {
		return errs.ErrOutOfMemory // the backend maps no further segments
	}
	if err := p.s.cfg.Grow(size); err != nil {
		return err
	}
	p.s.log.Info("symmetric heap grown", "bytes", size, "limit", p.s.cfg.Heap.Limit())
	return nil
}
