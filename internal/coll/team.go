// Package team implements OpenSHMEM teams: ordered subsets of a world's PEs,
// each with its own slot of sync words and scratch in the symmetric heap,
// and the barrier and collectives that run over them. Teams reach the data
// path and the control plane only through the Runtime their PE gives them.
package coll

import (
	"sync"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
)

// Runtime is what a team needs from its PE: paths to peers, its own heap,
// a failure-aware wait on it, completion and ordering of its puts, the
// control-plane agreement that team creation rests on, and the PE's actor
// system for the team's actor.
type Runtime interface {
	MyPE() int
	// Path returns the data path to world PE pe, or an error naming op.
	Path(op string, pe int) (transport.Path, error)
	// Local returns the calling PE's own heap.
	Local() []byte
	// WaitLocal blocks until cond holds, re-checking it whenever the PE's
	// heap changes; it fails when the world fails or ends.
	WaitLocal(op string, cond func() bool) error
	Quiet() error
	Fence()
	// Check returns nil while the PE is usable.
	Check(op string) error
	// Agree gathers payload from every member of the group members (world
	// ranks; the caller is group rank me) for round (domain, seq).
	Agree(op, domain string, seq uint64, members []int, me int, payload []byte) ([][]byte, error)
	// CollectiveLock serializes team creation with the PE's other
	// collective control operations; the returned function unlocks.
	CollectiveLock() func()
	// ActorRoot returns the root context of the PE's actor system.
	ActorRoot() *actor.RootContext
	// TeamPool returns the PE's pool of team slots.
	TeamPool() *Pool
}

// Team is an ordered set of world PEs. The zero value is not usable; teams
// come from a PE (TeamWorld, TeamShared) or from splitting another team.
// Collective calls on one team must come in the same order on every member;
// the team serializes its own calls from several goroutines.
type Team struct {
	rt      Runtime
	pool    *Pool
	id      string // unique within the world: names its agreement rounds
	members []int  // world ranks in team order
	me      int    // the caller's index in members
	slot    int
	l       layout
	root    bool // TeamWorld or TeamShared: never destroyed

	mu        sync.Mutex
	epoch     uint64 // barriers completed
	seq       uint64 // collectives started
	splits    uint64 // splits of this team started
	destroyed bool
}

// NewRoot returns TeamWorld or TeamShared (id "world" or "shared") of the
// PE behind rt: members are world ranks in team order, and the team takes
// slot of the pool for good. Every PE calls it in the same order at
// start-up, so the slot is the same everywhere without a message.
func NewRoot(rt Runtime, id string, members []int, slot int) (*Team, error) {
	pool := rt.TeamPool()
	if !pool.take(slot) {
		return nil, errs.New("Init", rt.MyPE(), errs.NoPE, errs.ErrOutOfMemory, "team slot %d for %s is taken", slot, id)
	}
	return newTeam(rt, id, members, slot, true), nil
}

func newTeam(rt Runtime, id string, members []int, slot int, root bool) *Team {
	me := -1
	for i, m := range members {
		if m == rt.MyPE() {
			me = i
		}
	}
	pool := rt.TeamPool()
	return &Team{rt: rt, pool: pool, id: id, members: members, me: me, slot: slot, l: pool.layout(slot), root: root}
}

// SyncWords returns how many 8-byte words a team of n PEs needs for Sync:
// one per dissemination round, plus one.
func SyncWords(n int) int {
	w := 1
	for d := 1; d < n; d <<= 1 {
		w++
	}
	return w
}

// MyPE returns the caller's number in the team, or -1 for a nil team.
func (t *Team) MyPE() int {
	if t == nil {
		return -1
	}
	return t.me
}

// NPEs returns the number of PEs in the team, or -1 for a nil team.
func (t *Team) NPEs() int {
	if t == nil {
		return -1
	}
	return len(t.members)
}

// Members returns the world ranks of the team in team order. The caller
// must not modify the slice.
func (t *Team) Members() []int { return t.members }

// Runtime returns the PE the team belongs to.
func (t *Team) Runtime() Runtime { return t.rt }

// ID returns the team's name within its world ("world", "shared", or the
// parent's ID with the split's number).
func (t *Team) ID() string { return t.id }

// TranslatePE returns the number in dst of this team's PE pe, or -1 when
// pe is out of range or not a member of dst.
func (t *Team) TranslatePE(pe int, dst *Team) int {
	if t == nil || dst == nil || pe < 0 || pe >= len(t.members) {
		return -1
	}
	w := t.members[pe]
	for i, m := range dst.members {
		if m == w {
			return i
		}
	}
	return -1
}

// usable reports why op cannot run on t (nil, destroyed, PE finalized).
// The caller holds t.mu.
func (t *Team) usable(op string) error {
	if t == nil {
		return errs.New(op, errs.NoPE, errs.NoPE, errs.ErrInvalidArgument, "nil team")
	}
	if t.destroyed {
		return errs.New(op, t.rt.MyPE(), errs.NoPE, errs.ErrInvalidArgument, "team %s was destroyed", t.id)
	}
	return t.rt.Check(op)
}
