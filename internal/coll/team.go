// Package coll runs OpenSHMEM teams on a live world: the barrier and the
// collectives over a team's PEs, on raw heap offsets, each team with its
// own slot of sync words and scratch in the symmetric heap. Each Team
// steps its team actor (package team) for what it owns: membership, slot,
// operation numbering, the split and destroy decisions. Teams reach the
// data path and the control plane only through the Runtime their PE gives
// them. Callers (package shmem) check every argument against Syms first:
// nothing here does.
package coll

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/team"
	"github.com/goshmem/shmem/transport"
)

// Runtime is what a team needs from its PE: paths to peers, its own heap,
// a failure-aware wait on it, completion and ordering of its puts, the
// control-plane agreement that team creation rests on, and its pool of
// team slots.
type Runtime interface {
	MyPE() int
	// Path returns the data path to world PE pe, or an error naming op.
	Path(op string, pe int) (transport.Path, error)
	// Local returns the calling PE's own heap, the same slice for the
	// PE's life (a team keeps it: see Team.local).
	Local() []byte
	// WaitBlocked blocks until cond holds, re-checking it whenever the
	// PE's heap changes; it fails when the world fails or ends, and when
	// b.CheckPeers, called now and then once the wait is long, fails.
	// cond reads only the 8-byte word at heap offset off, so writes
	// elsewhere need not wake the wait.
	WaitBlocked(op string, b Blocked, off uint64, cond func() bool) error
	Quiet() error
	Fence()
	// Check returns nil while the PE is usable.
	Check(op string) error
	// AgreeChecked gathers payload from every member of the group members
	// (world ranks; the caller is group rank me) for round (domain, seq);
	// while it waits long it calls b.CheckPeers as WaitBlocked does.
	AgreeChecked(op, domain string, seq uint64, members []int, me int, payload []byte, b Blocked) ([][]byte, error)
	// CollectiveLock serializes team creation with the PE's other
	// collective control operations; the returned function unlocks.
	CollectiveLock() func()
	// TeamPool returns the PE's pool of team slots.
	TeamPool() *Pool
	// FinalizedEarly tells the backend that an operation of this PE
	// fails because world PE pe called Finalize while this PE waited for
	// it (CheckPeers): the launcher then names pe, not this PE, whose
	// failure is the consequence. It must not block.
	FinalizedEarly(pe int)
}

// Team is an ordered set of world PEs. The zero value is not usable; teams
// come from a PE (TeamWorld, TeamShared) or from splitting another team.
// Collective calls on one team must come in the same order on every member;
// the team serializes its own calls from several goroutines.
type Team struct {
	rt   Runtime
	pool *Pool
	// a is the team actor: it owns the membership, the slot, the
	// numbering of operations and the split and destroy decisions. It is
	// stepped with mu held.
	a *team.Actor
	// members and me are the actor's membership (immutable), kept here
	// for the algorithms' inner loops.
	members []int
	me      int
	l       layout
	root    bool    // TeamWorld or TeamShared: never destroyed
	timer   OpTimer // rt when it times team operations, else nil (timerOf)
	local   []byte  // rt.Local(), the same slice for the PE's life (Runtime.Local): no operation calls the interface for it
	// parent is the team this one was split from (nil for TeamWorld and
	// TeamShared) and splitOp the number of that split among the
	// parent's operations: a member that gave the parent up at or before
	// it never made this team (see leftout.go).
	parent  *Team
	splitOp uint64
	// ahead is the world rank of the member 2^k places ahead of this one,
	// the peer of dissemination round k (sync, begin): a barrier divides
	// nothing.
	ahead []int

	// gone is set once Destroy has run: the team's contexts read it on
	// every operation (core.PE.usable), without mu, which a collective
	// holds for its whole length.
	gone atomic.Bool

	mu     sync.Mutex
	epochs [syncSets]uint64 // operations completed in each sync set
	seq    uint64           // collectives started
	splits uint64           // splits of this team started
	// cur is the operation the member is in (or last ran), as published
	// in its operation word; broken is why the team is unusable after an
	// operation that could never complete (see ident.go).
	cur    atomic.Uint64 // opWord of the operation
	broken error
	early  time.Time // when a mismatch was first seen with members not there yet
	// left is when a member that called Finalize was first seen in this
	// operation (see CheckPeers).
	left time.Time
	// wait is the word the member waits on (see waitWord).
	wait waitFor
	// buf is the operations' working memory, made with the team and
	// reused by every call (see buffers.go).
	buf buffers
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
	a := team.New(id, members, rt.MyPE(), slot)
	pool := rt.TeamPool()
	t := &Team{rt: rt, pool: pool, a: a, members: a.Members(), me: a.MyPE(), l: pool.layout(slot), root: root, timer: timerOf(rt), local: rt.Local()}
	t.wait.reached = t.wordReached
	t.buf = newBuffers(len(t.members))
	for d := 1; d < len(t.members); d <<= 1 {
		t.ahead = append(t.ahead, t.members[(t.me+d)%len(t.members)])
	}
	return t
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
func (t *Team) ID() string { return t.a.ID() }

// Number gives the next number of the team's operations to a team-wide
// operation of kind k that the PE runs itself (allocation on TeamWorld);
// op names it in errors. It fails as the team's own operations do once a
// member is lost to the team (it gave an operation up, or this PE learnt
// that one did or left, or gave up itself): the members' heaps may no
// longer agree. After a mismatch's verdict they do, and it numbers on.
func (t *Team) Number(op string, k team.Kind) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.broken != nil && !errors.Is(t.broken, errs.ErrInvalidArgument) {
		return t.usable(op)
	}
	return t.number(op, k)
}

// number steps the team actor into operation op of kind k; t.mu is held.
func (t *Team) number(op string, k team.Kind) error {
	o, err := t.a.Begin(team.Begin{Kind: k, Op: op})
	if err != nil {
		return err
	}
	t.publish(o)
	return nil
}

// NumberFinalize numbers Finalize on the team and marks the PE left. A
// broken team keeps its operation word where the failure left it, so that
// peers still blocked in that operation reach the same verdict.
func (t *Team) NumberFinalize() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.broken == nil {
		_ = t.number("Finalize", team.KindFinalize)
	}
	MarkLeft(t.rt)
}

// Ops returns how many operations the team has numbered on this PE.
func (t *Team) Ops() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.a.Ops()
}

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
	if t.a.Destroyed() {
		return errs.New(op, t.rt.MyPE(), errs.NoPE, errs.ErrInvalidArgument, "team %s was destroyed", t.a.ID())
	}
	if t.broken != nil {
		sentinel := errs.ErrInvalidArgument
		switch {
		case errors.Is(t.broken, errs.ErrPEFailed):
			sentinel = errs.ErrPEFailed
		case errors.Is(t.broken, errs.ErrTimeout):
			sentinel = errs.ErrTimeout // this PE gave an operation up (giveup.go)
		}
		return errs.New(op, t.rt.MyPE(), errs.NoPE, sentinel, "team %s is unusable after an earlier failure (%v)", t.a.ID(), t.broken)
	}
	return t.rt.Check(op)
}
