package pe

import (
	"bytes"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/goshmem/shmem/actors"
	"github.com/goshmem/shmem/heap"
	"github.com/goshmem/shmem/internal/errs"
)

// HeapOp applies one collective heap operation: every PE must call it with
// the same request in the same order. The PEs first agree through the
// coordinator (which also makes the call a synchronization point), then each
// applies the request to its own heap through its heap actor; the allocator
// being deterministic, every PE gets the same offset. A request that differs
// on any PE fails with ErrInvalidArgument on every PE, naming them. A PE
// that rejected its own arguments before getting here passes the zero
// Request: it joins the agreement (so the others fail with it instead of
// waiting, and every PE's collective order stays the same) and nothing is
// applied anywhere.
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
	p.s.collMu.Lock()
	defer p.s.collMu.Unlock()
	p.s.allocSeq++
	payload, err := msgpack.Marshal(&req)
	if err != nil {
		return heap.Result{}, err
	}
	all, err := p.Agree(op, "heap", p.s.allocSeq, p.s.world.Members(), p.MyPE(), payload)
	if err != nil {
		return heap.Result{}, err
	}
	refusal, _ := msgpack.Marshal(&heap.Request{})
	var differ, refused []int
	for r, b := range all {
		switch {
		case bytes.Equal(b, refusal):
			refused = append(refused, r)
		case !bytes.Equal(b, all[0]):
			differ = append(differ, r)
		}
	}
	if len(refused) > 0 {
		return heap.Result{}, errs.New(op, p.MyPE(), errs.NoPE, errs.ErrInvalidArgument,
			"PEs %v rejected their arguments (collective calls must match on every PE)", refused)
	}
	if len(differ) > 0 {
		return heap.Result{}, errs.New(op, p.MyPE(), errs.NoPE, errs.ErrInvalidArgument,
			"PEs %v asked for a different %s than PE 0 (collective calls must match on every PE)", differ, req.Kind)
	}
	res, err := heap.ApplyVia(p.s.cfg.System.Root, p.s.heapPID, req, p.s.cfg.Timeout)
	if err != nil {
		return heap.Result{}, errs.New(op, p.MyPE(), errs.NoPE, errs.ErrTimeout, "heap actor: %v", err)
	}
	if res.Err != nil {
		return res, errs.New(op, p.MyPE(), errs.NoPE, res.Err, "%s of %d bytes in a heap of %d", req.Kind, req.Size, p.Heap().Size())
	}
	return res, nil
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
	all, err := actors.RunGather(p.s.cfg.System.Root, p.s.cfg.Coordinator, g, p.s.cfg.Timeout, op, p.MyPE())
	if err != nil {
		return nil, err
	}
	return all, nil
}
