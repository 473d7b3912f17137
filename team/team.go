// Package team implements OpenSHMEM teams: ordered subsets of a world's PEs,
// each with its own synchronization words in the symmetric heap, and the
// barrier and collectives that run over them. Teams reach the data path only
// through the Runtime their PE gives them.
package team

import (
	"github.com/goshmem/shmem/transport"
)

// Runtime is what a team needs from its PE: paths to peers, its own heap,
// a failure-aware wait on it, and completion of its puts.
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
}

// Team is an ordered set of world PEs. The zero value is not usable; teams
// come from a PE (TeamWorld, TeamShared) or from splitting another team.
type Team struct {
	rt      Runtime
	members []int // world ranks in team order
	me      int   // the caller's index in members
	psync   uint64
	epoch   uint64 // barriers completed; guarded by the caller's collective order
}

// New returns the team of members (world ranks, in team order) for the PE
// behind rt, with psync the heap offset of its synchronization words
// (SyncWords(len(members)) 8-byte words, zeroed, the same offset on every
// member).
func New(rt Runtime, members []int, psync uint64) *Team {
	me := -1
	for i, m := range members {
		if m == rt.MyPE() {
			me = i
		}
	}
	return &Team{rt: rt, members: members, me: me, psync: psync}
}

// SyncWords returns how many 8-byte words a team of n PEs needs for Sync.
func SyncWords(n int) int {
	w := 1
	for d := 1; d < n; d <<= 1 {
		w++
	}
	return w
}

// MyPE returns the caller's number in the team.
func (t *Team) MyPE() int { return t.me }

// NPEs returns the number of PEs in the team.
func (t *Team) NPEs() int { return len(t.members) }

// Members returns the world ranks of the team in team order. The caller
// must not modify the slice.
func (t *Team) Members() []int { return t.members }

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
