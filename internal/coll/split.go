package coll

import (
	"fmt"
	"strconv"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/team"
)

// SplitStrided makes the team of the parent's PEs start, start+stride, ...
// (size of them; stride may be negative) (shmem_team_split_strided). It is
// collective over the parent: every member calls it with the same
// arguments, and a member outside the new team gets (nil, nil). Arguments
// that differ between members, or that name PEs outside the parent, fail
// with ErrInvalidArgument on every member; no free team slot common to the
// new team's members fails with ErrOutOfMemory on every member.
//
// extra is the new team's config: one value, which must be non-negative
// everywhere and match among the new team's members (the PEs left out may
// pass another), or further parameters every member must agree on.
func (t *Team) SplitStrided(start, stride, size int, extra ...int64) (*Team, error) {
	const op = "SplitStrided"
	teams, err := t.split(op, append([]int64{1, int64(start), int64(stride), int64(size)}, extra...), func(n int) ([][]int, []int, error) {
		if size < 1 || size > n || start < 0 || start >= n || (stride == 0 && size > 1) {
			return nil, nil, fmt.Errorf("start %d, stride %d, size %d in a team of %d", start, stride, size, n)
		}
		last := int64(start) + int64(stride)*int64(size-1)
		if last < 0 || last >= int64(n) {
			return nil, nil, fmt.Errorf("start %d, stride %d, size %d runs past a team of %d", start, stride, size, n)
		}
		idx := make([]int, size)
		for i := range idx {
			idx[i] = start + i*stride
		}
		if len(extra) != 1 {
			// Without one config every param matches everywhere.
			return [][]int{idx}, nil, nonNegative(extra)
		}
		// The config need match only among the new team's members.
		return [][]int{idx}, []int{4}, nil
	})
	if err != nil {
		return nil, err
	}
	return teams[0], nil
}

// Split2D arranges the parent's PEs in rows of xrange (the last row may be
// partial) and returns the caller's row (x) and column (y) teams
// (shmem_team_split_2d); an xrange above the parent's size is the size.
// Collective over the parent, with the failure rules of SplitStrided,
// except that extra (given, the x config, then the y config) need match
// only among the members of one row (x) or column (y): the spec lets
// PEs that end in different teams pass different configs.
func (t *Team) Split2D(xrange int, extra ...int64) (x, y *Team, err error) {
	const op = "Split2D"
	params := append([]int64{2, int64(xrange)}, extra...)
	teams, err := t.split(op, params, func(n int) ([][]int, []int, error) {
		if xrange < 1 {
			return nil, nil, fmt.Errorf("xrange %d", xrange)
		}
		xr := min(xrange, n)
		rows := (n + xr - 1) / xr
		var lists [][]int
		var perTeam []int
		for r := 0; r < rows; r++ {
			var row []int
			for i := r * xr; i < min(n, (r+1)*xr); i++ {
				row = append(row, i)
			}
			lists = append(lists, row)
			perTeam = append(perTeam, 2) // the x config
		}
		for c := 0; c < xr; c++ {
			var col []int
			for i := c; i < n; i += xr {
				col = append(col, i)
			}
			lists = append(lists, col)
			perTeam = append(perTeam, 3) // the y config
		}
		if len(extra) != 2 {
			// Without both configs every param matches everywhere.
			if err := nonNegative(extra); err != nil {
				return nil, nil, err
			}
			perTeam = nil
		}
		return lists, perTeam, nil
	})
	if err != nil {
		return nil, nil, err
	}
	for _, nt := range teams {
		if nt == nil {
			continue
		}
		if x == nil {
			x = nt
		} else {
			y = nt
		}
	}
	return x, y, nil
}

// split runs one team creation over t: the members agree on params and on
// free slots, build turns the parent's size into the new teams' member
// lists (parent indices) and, for params that need match only within one
// new team, the index of each team's (team.SplitAgreed.PerTeam; nil when
// all match everywhere), and the caller gets, for each new team, the team
// if it is a member and nil if not.
func (t *Team) split(op string, params []int64, build func(n int) ([][]int, []int, error)) ([]*Team, error) {
	if t == nil {
		return nil, t.usable(op)
	}
	unlock := t.rt.CollectiveLock()
	defer unlock()
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.usable(op); err != nil {
		return nil, err
	}
	if err := t.number(op, team.KindSplit); err != nil {
		return nil, err
	}
	t.splits++
	seq := t.splits
	all, err := t.rt.AgreeChecked(op, "team/"+t.a.ID(), seq, t.members, t.me, team.SplitPayload(params, t.pool.free()), t)
	if err != nil {
		if timedOut(err) {
			t.giveUp(op, err)
		}
		return nil, named(op, err)
	}
	if t.quitSaid() {
		// A member gave the team up, this split perhaps (the round
		// completed, but too late for its operation timeout): it made no
		// team, so no member makes one without it.
		return nil, t.poisoned(op)
	}
	lists, perTeam, berr := build(len(t.members))
	var slots []int
	for _, e := range t.a.Step(team.SplitAgreed{Op: op, Params: params, Payloads: all, Lists: lists, PerTeam: perTeam, BuildErr: berr, Slots: t.pool.Slots()}) {
		switch e := e.(type) {
		case team.Failed:
			return nil, e.Err
		case team.SplitPlan:
			slots = e.Slots
		}
	}
	out := make([]*Team, len(lists))
	for i, l := range lists {
		member := false
		world := make([]int, len(l))
		for k, j := range l {
			world[k] = t.members[j]
			member = member || j == t.me
		}
		if !member {
			continue
		}
		if !t.pool.take(slots[i]) {
			// Cannot happen: the slot was free in the bitmap this PE sent,
			// and only this PE's creations (serialized) take slots.
			return nil, errs.New(op, t.rt.MyPE(), errs.NoPE, errs.ErrOutOfMemory, "team slot %d was taken meanwhile", slots[i])
		}
		out[i] = newTeam(t.rt, t.a.ID()+"/"+strconv.FormatUint(seq, 10)+"."+strconv.Itoa(i), world, slots[i], false)
		out[i].parent, out[i].splitOp = t, decodeOp(t.cur.Load()).Seq
	}
	return out, nil
}

// Destroy ends the team (shmem_team_destroy): it is collective over the
// team, so it first synchronizes the members (no member still writes into
// the team's slot after that), then zeroes and returns the slot to the
// pool. Destroying a team twice does nothing;
// TeamWorld and TeamShared cannot be destroyed (ErrInvalidArgument).
func (t *Team) Destroy() error {
	const op = "Destroy"
	if t == nil {
		return t.usable(op)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.a.Destroyed() {
		return nil
	}
	if t.root {
		return errs.New(op, t.rt.MyPE(), errs.NoPE, errs.ErrInvalidArgument, "team %s cannot be destroyed", t.a.ID())
	}
	err := t.broken
	if err == nil {
		err = t.number(op, team.KindDestroy)
	}
	if err == nil {
		err = named(op, t.rt.Quiet())
	}
	if err == nil {
		err = named(op, t.sync(op, syncDestroy))
	}
	for _, e := range t.a.Step(team.Destroyed{Err: err}) {
		if r, ok := e.(team.Release); ok {
			t.pool.release(t.local, r.Slot)
		}
	}
	t.gone.Store(t.a.Destroyed())
	return err
}
