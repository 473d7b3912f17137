// Package team is the team actor: the state machine that owns one
// member's view of an OpenSHMEM team. It holds the team's membership (world
// ranks in team order), its slot of sync words and scratch in the
// symmetric heap, the numbering of the team's operations, and the decisions
// of the split and destroy agreements. Every team-wide operation (barrier,
// sync, each collective, allocation, split, destroy, finalize) gets the
// next number and its kind is recorded, so that what two members called as
// their n-th operation can be compared: a mismatch is detected by Step.
//
// The actor reaches no memory and no socket; the runtime that runs the
// team's algorithms on a live world feeds it one message at a time and
// acts on the effects it returns.
package team

import (
	"fmt"

	"github.com/goshmem/shmem/internal/errs"
)

// Kind is the kind of a team-wide operation.
type Kind uint8

// The operations a team numbers.
const (
	KindBarrier Kind = iota + 1
	KindSync
	KindBroadcast
	KindCollect
	KindFCollect
	KindAlltoall
	KindAlltoalls
	KindReduce
	KindAlloc
	KindSplit
	KindDestroy
	KindFinalize
)

var kindNames = [...]string{"", "Barrier", "Sync", "Broadcast", "Collect", "FCollect", "Alltoall", "Alltoalls", "Reduce", "Alloc", "Split", "Destroy", "Finalize"}

func (k Kind) String() string {
	if int(k) < len(kindNames) && k != 0 {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Op is one team-wide operation as a member numbered it: its Seq-th on the
// team (from 1), of kind Kind.
type Op struct {
	Seq  uint64
	Kind Kind
}

// window is how many of its latest operations a member remembers for
// comparison. Members of a team are at most a few operations apart (every
// collective's entry synchronizes them), so a peer's report about an older
// operation is stale and ignored.
const window = 64

// Actor is one member's team. Use New; it is not safe for concurrent use.
type Actor struct {
	id        string
	members   []int // world ranks, team order
	me        int   // the caller's index in members
	slot      int
	ops       uint64
	kinds     [window]Kind // kinds[seq%window] of the latest operations
	destroyed bool
}

// New returns the team actor of the member with world rank self of the team
// id whose world ranks, in team order, are members, holding slot. A self
// outside members gives an actor whose MyPE is -1. The actor keeps members
// without copying it (the PEs of a simulated world share TeamWorld's): the
// caller must not change it.
func New(id string, members []int, self, slot int) *Actor {
	a := &Actor{id: id, members: members, me: -1, slot: slot}
	for i, m := range members {
		if m == self {
			a.me = i
		}
	}
	return a
}

// ID returns the team's name within its world.
func (a *Actor) ID() string { return a.id }

// Members returns the world ranks of the team in team order; the caller
// must not modify the slice.
func (a *Actor) Members() []int { return a.members }

// MyPE returns the member's number in the team.
func (a *Actor) MyPE() int { return a.me }

// Slot returns the team's slot in the pool.
func (a *Actor) Slot() int { return a.slot }

// Ops returns how many operations the member began on the team.
func (a *Actor) Ops() uint64 { return a.ops }

// Begin asks to start a team-wide operation of Kind (Op names the API
// call, for errors).
type Begin struct {
	Kind Kind
	Op   string
}

// Observe reports what member From (team number) called as its operation
// Op.Seq, as learnt from that member.
type Observe struct {
	From int
	Op   Op
}

// Destroyed reports that the team's destroy ran; Err is its closing
// synchronization's outcome.
type Destroyed struct{ Err error }

// Started is an effect: the operation may run, as number Op.Seq.
type Started struct{ Op Op }

// Failed is an effect: the operation or report failed with Err, which
// names the operation and the PEs and wraps a sentinel.
type Failed struct{ Err error }

// Release is an effect: the team's slot may be zeroed and reused.
type Release struct{ Slot int }

// Destroyed reports whether the team was destroyed.
func (a *Actor) Destroyed() bool { return a.destroyed }

// Step takes one message and returns its effects:
//   - Begin: Started with the operation's number, or Failed when the team
//     was destroyed;
//   - Observe: Failed when the peer's operation of that number is of
//     another kind than this member's, naming both PEs and both calls;
//   - SplitAgreed: SplitPlan, or Failed (see SplitAgreed);
//   - Destroyed: Release of the slot, unless the closing sync failed.
func (a *Actor) Step(m any) []any {
	switch m := m.(type) {
	case Begin:
		op, err := a.Begin(m)
		if err != nil {
			return []any{Failed{err}}
		}
		return []any{Started{op}}
	case Observe:
		if err := a.compare(m); err != nil {
			return []any{Failed{err}}
		}
	case SplitAgreed:
		return a.planSplit(m)
	case Destroyed:
		if a.destroyed {
			return nil
		}
		a.destroyed = true
		if m.Err == nil {
			// After a failed sync a peer may still write into the slot,
			// so it is not reused; the PE is failing anyway.
			return []any{Release{a.slot}}
		}
	}
	return nil
}

// Begin is Step(Begin) returning its effect as values, without
// allocating: the form a runtime uses on every barrier and collective.
func (a *Actor) Begin(m Begin) (Op, error) {
	if a.destroyed {
		return Op{}, errs.New(m.Op, a.self(), errs.NoPE, errs.ErrInvalidArgument, "team %s was destroyed", a.id)
	}
	a.ops++
	a.kinds[a.ops%window] = m.Kind
	return Op{Seq: a.ops, Kind: m.Kind}, nil
}

// compare checks a peer's report against this member's own operation of
// the same number, if it is recent enough to remember.
func (a *Actor) compare(m Observe) error {
	if m.From < 0 || m.From >= len(a.members) {
		return errs.New("team "+a.id, a.self(), errs.NoPE, errs.ErrInvalidArgument, "report from member %d of a team of %d", m.From, len(a.members))
	}
	if m.Op.Seq == 0 || m.Op.Seq > a.ops || a.ops-m.Op.Seq >= window {
		return nil // not called here yet, or too old to remember
	}
	mine := a.kinds[m.Op.Seq%window]
	if mine == m.Op.Kind {
		return nil
	}
	peer := a.members[m.From]
	return errs.New(mine.String(), a.self(), peer, errs.ErrInvalidArgument,
		"operation %d of team %s: PE %d called %s, PE %d called %s (collective calls must come in the same order on every member)",
		m.Op.Seq, a.id, a.self(), mine, peer, m.Op.Kind)
}

// self returns the member's world rank, or NoPE outside the team.
func (a *Actor) self() int {
	if a.me < 0 {
		return errs.NoPE
	}
	return a.members[a.me]
}
