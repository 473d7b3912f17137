package team

import (
	"encoding/binary"
	"math/bits"

	"github.com/goshmem/shmem/internal/errs"
)

// SplitPayload is what a member contributes to a split's agreement: the
// split's parameters (which must match on every member) and the bitmap of
// team slots free on that member.
func SplitPayload(params []int64, free uint64) []byte {
	b := make([]byte, 8*(len(params)+1))
	for i, v := range params {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(v))
	}
	binary.LittleEndian.PutUint64(b[8*len(params):], free)
	return b
}

// SplitAgreed is the outcome of a split's agreement round on this team:
// every member's SplitPayload in team order, this member's Params, and the
// new teams' member lists (indices into this team) as the split defines
// them, or BuildErr when the parameters define no teams. Op names the API
// call, Slots the pool's capacity, for errors.
//
// PerTeam, when it has an entry for each of Lists, names for new team i the
// index in Params of the config that must match only among that team's
// members (shmem_team_split_2d: the members of one row pass one x config,
// another row may pass another; shmem_team_split_strided: the PEs left
// out pass any), and be non-negative on every member; the params it names
// for no team match on every member. Nil: every param matches on every
// member.
type SplitAgreed struct {
	Op       string
	Params   []int64
	Payloads [][]byte
	Lists    [][]int
	PerTeam  []int
	BuildErr error
	Slots    int
}

// SplitPlan is an effect: new team i of the split takes slot Slots[i].
// Every member computes the same plan from the same payloads.
type SplitPlan struct{ Slots []int }

// planSplit judges a split's agreement: members that passed other
// parameters fail it on every member (ErrInvalidArgument naming them), and
// so do parameters that define no teams (BuildErr); else each new team takes the lowest slot free on all of its members. A
// slot given to one team is no longer free on its members, so teams that
// share a PE (Split2D's rows and columns) get different slots. No common
// free slot is ErrOutOfMemory.
func (a *Actor) planSplit(m SplitAgreed) []any {
	mine := SplitPayload(m.Params, 0)
	n := len(mine) - 8
	perTeam := m.BuildErr == nil && len(m.PerTeam) == len(m.Lists) && len(m.Lists) > 0
	scoped := make([]bool, len(m.Params))
	if perTeam {
		for _, q := range m.PerTeam {
			if q < 0 || q >= len(m.Params) {
				perTeam = false
				clear(scoped)
				break
			}
			scoped[q] = true
		}
	}
	free := make([]uint64, len(m.Payloads))
	var differ []int
	for i, b := range m.Payloads {
		if len(b) != len(mine) || !sameParams(b, mine, scoped) {
			differ = append(differ, a.members[i])
			continue
		}
		free[i] = binary.LittleEndian.Uint64(b[n:])
	}
	if len(differ) > 0 {
		return []any{Failed{errs.New(m.Op, a.self(), errs.NoPE, errs.ErrInvalidArgument,
			"PEs %v passed other arguments than this PE (collective calls must match on every member of team %s)", differ, a.id)}}
	}
	if m.BuildErr != nil {
		return []any{Failed{errs.New(m.Op, a.self(), errs.NoPE, errs.ErrInvalidArgument, "%v", m.BuildErr)}}
	}
	if perTeam {
		if err := a.perTeamParams(m); err != nil {
			return []any{Failed{err}}
		}
	}
	slots := make([]int, len(m.Lists))
	for i, l := range m.Lists {
		mask := ^uint64(0)
		for _, j := range l {
			mask &= free[j]
		}
		if mask == 0 {
			return []any{Failed{errs.New(m.Op, a.self(), errs.NoPE, errs.ErrOutOfMemory,
				"no team slot is free on every member of the new team (%d slots per PE; destroy teams to reuse them)", m.Slots)}}
		}
		slots[i] = bits.TrailingZeros64(mask)
		for _, j := range l {
			free[j] &^= 1 << slots[i]
		}
	}
	return []any{SplitPlan{slots}}
}

// sameParams reports whether payloads b and mine carry the same params,
// leaving out those scoped to one new team.
func sameParams(b, mine []byte, scoped []bool) bool {
	for q, skip := range scoped {
		if !skip && string(b[8*q:8*q+8]) != string(mine[8*q:8*q+8]) {
			return false
		}
	}
	return true
}

// perTeamParams checks, for each new team, that its members passed the
// same config param (m.PerTeam) and that it is not negative. Every member
// judges every new team from the same payloads, so a mismatch in any of
// them fails the split on every member of the parent, as the spec asks
// (no new team is made when one cannot be). The payloads' lengths were
// checked against this member's.
func (a *Actor) perTeamParams(m SplitAgreed) error {
	param := func(j, q int) int64 { return int64(binary.LittleEndian.Uint64(m.Payloads[j][8*q:])) }
	// Negative values fail the split wherever they are, also on a PE that
	// is in no team they go with (SplitStrided's non-members).
	for _, q := range m.PerTeam {
		for j := range m.Payloads {
			if v := param(j, q); v < 0 {
				return errs.New(m.Op, a.self(), errs.NoPE, errs.ErrInvalidArgument, "team config value %d (PE %d)", v, a.members[j])
			}
		}
	}
	for i, l := range m.Lists {
		if len(l) == 0 {
			continue
		}
		q := m.PerTeam[i]
		first := param(l[0], q)
		var differ []int
		for _, j := range l {
			if v := param(j, q); v != first {
				differ = append(differ, a.members[j])
			}
		}
		if len(differ) > 0 {
			return errs.New(m.Op, a.self(), errs.NoPE, errs.ErrInvalidArgument,
				"PEs %v passed another team config than PE %d for the same new team (its members must match)", differ, a.members[l[0]])
		}
	}
	return nil
}
