package heap

import (
	"bytes"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/goshmem/shmem/internal/errs"
)

// Actor is the heap actor of one PE: it owns the PE's Heap (allocator and
// object table) and runs the collective allocation agreement. An
// allocation, free or realloc is collective: every PE proposes its Request
// (Begin), the PEs gather every proposal (the runtime's agreement round,
// which also makes the call a synchronization point), and each PE's actor
// judges the same proposals the same way (Agreed): all equal, it applies
// the request, and the allocator being deterministic every PE gets the same
// offset; any difference fails on every PE, naming the PEs that differ.
//
// Actor is a pure state machine: Step reaches nothing but its Heap. It is
// not safe for concurrent use; the runtime feeds it one message at a time,
// in the PE's collective order.
type Actor struct {
	h    *Heap
	rank int // the PE's rank, for errors
	seq  uint64
	cur  *Begin // the call whose agreement is under way, or nil
	// growing: cur waits for Grown; growErr: this PE could not make the
	// grown memory usable, so it refused, and reports why.
	growing bool
	growErr error
}

// NewActor returns the heap actor of PE rank, owning h.
func NewActor(h *Heap, rank int) *Actor { return &Actor{h: h, rank: rank} }

// Heap returns the heap the actor owns, for lookups (Lookup, Bytes); only
// the actor changes it.
func (a *Actor) Heap() *Heap { return a.h }

// Begin starts a collective heap call Op (the API call's name, for
// errors) asking for Req. A PE that rejected its own arguments begins with
// the zero Request: it still takes part in the agreement, so the other PEs
// fail with it instead of waiting, and nothing is applied anywhere.
type Begin struct {
	Op  string
	Req Request
}

// Agreed ends the call under way with the outcome of its agreement round:
// every member's proposal in world-rank order, or the error the round
// ended with (a PE failed, a timeout).
type Agreed struct {
	Seq      uint64
	Payloads [][]byte
	Err      error
}

// Reserve applies an allocation without agreement: start-up reservations
// that every PE makes alike before any collective call (the team pool).
type Reserve struct{ Req Request }

// Propose is an effect: contribute Payload to the agreement round Seq of
// the "heap" domain over every PE of the world, then send the outcome back
// as Agreed.
type Propose struct {
	Seq     uint64
	Payload []byte
}

// Grow is an effect: make the heap's first Size bytes usable (map the
// further segment), then send Grown. The actor asks for it before it
// proposes a request that needs it, so that when the agreement completes
// every PE's memory is there: a PE that returns first may put into the
// new segment of one that has not yet applied the request.
type Grow struct{ Size int64 }

// Grown answers Grow: Err is why the memory could not be made usable.
type Grown struct{ Err error }

// growFailed is the Grow of the proposal of a PE that could not grow: the
// others fail with ErrOutOfMemory too, naming it.
const growFailed = -1

// Done is an effect: the call is over with Result, or with Err (which
// names the call and wraps a sentinel).
type Done struct {
	Result Result
	Err    error
}

// Step takes one message and returns its effects.
func (a *Actor) Step(m any) []any {
	switch m := m.(type) {
	case Begin:
		if a.cur != nil {
			return []any{Done{Err: errs.New(m.Op, a.rank, errs.NoPE, errs.ErrInvalidArgument,
				"heap call %s began while %s was under way", m.Op, a.cur.Op)}}
		}
		a.growErr = nil
		if g := a.h.growTarget(m.Req); g > 0 {
			m.Req.Grow = g
			a.cur, a.growing = &m, true
			return []any{Grow{Size: g}}
		}
		return a.propose(m)
	case Grown:
		if a.cur == nil || !a.growing {
			return nil
		}
		call := *a.cur
		a.cur, a.growing = nil, false
		if m.Err != nil {
			// Take part with a refusal, so the others fail instead of
			// waiting; this PE reports the real cause.
			a.growErr = errs.New(call.Op, a.rank, errs.NoPE, errs.ErrOutOfMemory,
				"growing the heap to %d bytes: %v", call.Req.Grow, m.Err)
			call.Req = Request{Grow: growFailed}
		}
		return a.propose(call)
	case Agreed:
		if a.cur == nil || m.Seq != a.seq {
			return nil // not the call under way: nothing to finish
		}
		call := *a.cur
		a.cur = nil
		return []any{a.judge(call, m)}
	case Reserve:
		res := a.h.apply(m.Req)
		if res.Err != nil {
			return []any{Done{Result: res, Err: errs.New("Init", a.rank, errs.NoPE, res.Err, "reserving %d bytes", m.Req.Size)}}
		}
		return []any{Done{Result: res}}
	}
	return nil
}

// propose starts the agreement round of call.
func (a *Actor) propose(call Begin) []any {
	payload, err := msgpack.Marshal(&call.Req)
	if err != nil {
		return []any{Done{Err: errs.New(call.Op, a.rank, errs.NoPE, errs.ErrInvalidArgument, "%v", err)}}
	}
	a.seq++
	a.cur = &call
	return []any{Propose{Seq: a.seq, Payload: payload}}
}

// judge compares the proposals of a finished round and applies the call
// when they all match.
func (a *Actor) judge(call Begin, m Agreed) Done {
	if m.Err != nil {
		return Done{Err: m.Err}
	}
	if a.growErr != nil {
		return Done{Err: a.growErr}
	}
	// Every PE compares with PE 0's proposal, so all give the same verdict
	// and the same message. A refusal is the zero Request's encoding.
	refusal, err := msgpack.Marshal(&Request{})
	if err != nil {
		return Done{Err: errs.New(call.Op, a.rank, errs.NoPE, errs.ErrInvalidArgument, "%v", err)}
	}
	noGrowth, err := msgpack.Marshal(&Request{Grow: growFailed})
	if err != nil {
		return Done{Err: errs.New(call.Op, a.rank, errs.NoPE, errs.ErrInvalidArgument, "%v", err)}
	}
	var differ, refused, short []int
	for r, b := range m.Payloads {
		switch {
		case bytes.Equal(b, noGrowth):
			short = append(short, r)
		case bytes.Equal(b, refusal):
			refused = append(refused, r)
		case !bytes.Equal(b, m.Payloads[0]):
			differ = append(differ, r)
		}
	}
	if len(short) > 0 {
		return Done{Err: errs.New(call.Op, a.rank, errs.NoPE, errs.ErrOutOfMemory,
			"PEs %v could not grow their heaps to %d bytes", short, call.Req.Grow)}
	}
	if len(refused) > 0 {
		return Done{Err: errs.New(call.Op, a.rank, errs.NoPE, errs.ErrInvalidArgument,
			"PEs %v rejected their arguments (collective calls must match on every PE)", refused)}
	}
	if len(differ) > 0 {
		return Done{Err: errs.New(call.Op, a.rank, errs.NoPE, errs.ErrInvalidArgument,
			"PEs %v asked for a different %s than PE 0 (collective calls must match on every PE)", differ, call.Req.Kind)}
	}
	res := a.h.apply(call.Req)
	if res.Err != nil {
		if a.h.Limit() > a.h.Size() {
			return Done{Result: res, Err: errs.New(call.Op, a.rank, errs.NoPE, res.Err,
				"%s of %d bytes in a heap of %d (limit %d)", call.Req.Kind, call.Req.Size, a.h.Size(), a.h.Limit())}
		}
		return Done{Result: res, Err: errs.New(call.Op, a.rank, errs.NoPE, res.Err,
			"%s of %d bytes in a heap of %d", call.Req.Kind, call.Req.Size, a.h.Size())}
	}
	return Done{Result: res}
}
