package core

import (
	"fmt"

	"github.com/goshmem/shmem/actors"
	"github.com/goshmem/shmem/heap"
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
			all, err := p.Agree(op, "heap", e.Seq, p.s.world.Members(), p.MyPE(), e.Payload)
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

// Agree contributes payload to the gather round (domain, seq) of the group
// of world ranks members, where the caller is group rank me, and returns
// every member's payload in group order. The caller holds the collective
// order (CollectiveLock or HeapOp's own lock).
func (p *PE) Agree(op, domain string, seq uint64, members []int, me int, payload []byte) ([][]byte, error) {
	if err := p.Check(op); err != nil {
		return nil, err
	}
	if len(members) == 1 {
		return [][]byte{payload}, nil
	}
	if b := p.s.cfg.Block; b != nil {
		defer b()()
	}
	g := &actors.Gather{Domain: domain, Seq: seq, Rank: me, N: len(members), Members: members, Payload: payload}
	f := actors.StartGather(p.s.cfg.System.Root, p.s.cfg.Coordinator, g, p.s.cfg.Timeout)
	p.s.agreeMu.Lock()
	p.s.agreeing[f.PID()] = struct{}{}
	p.s.agreeMu.Unlock()
	// A coordinator that failed before the future was registered is not
	// told about it by coordinatorLost: look once more.
	if c := p.s.cfg.CoordinatorRank; c >= 0 && c < len(p.s.failed) {
		if r := p.s.failed[c].Load(); r != nil {
			p.s.coordinatorLost(c, *r)
		}
	}
	all, err := actors.AwaitGather(f, g, p.s.cfg.Timeout, op, p.MyPE())
	p.s.agreeMu.Lock()
	delete(p.s.agreeing, f.PID())
	p.s.agreeMu.Unlock()
	return all, err
}

// coordinatorLost ends every agreement under way: the coordinator ran on
// PE rank, which failed, so no reply will come. Each waiter gets the reply
// an aborted round gets, naming rank.
func (s *state) coordinatorLost(rank int, reason string) {
	s.agreeMu.Lock()
	defer s.agreeMu.Unlock()
	for pid := range s.agreeing {
		s.cfg.System.Root.Send(pid, &actors.GatherReply{Err: fmt.Sprintf("PE %d, which runs the agreement coordinator, failed: %s", rank, reason), Failed: rank})
		delete(s.agreeing, pid)
	}
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
