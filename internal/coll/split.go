package coll

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"strconv"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/goshmem/shmem/internal/errs"
)

// SplitStrided makes the team of the parent's PEs start, start+stride, ...
// (size of them; stride may be negative) (shmem_team_split_strided). It is
// collective over the parent: every member calls it with the same
// arguments, and a member outside the new team gets (nil, nil). Arguments
// that differ between members, or that name PEs outside the parent, fail
// with ErrInvalidArgument on every member; no free team slot common to the
// new team's members fails with ErrOutOfMemory on every member.
func (t *Team) SplitStrided(start, stride, size int) (*Team, error) {
	const op = "SplitStrided"
	teams, err := t.split(op, []int64{1, int64(start), int64(stride), int64(size)}, func(n int) ([][]int, error) {
		if size < 1 || size > n || start < 0 || start >= n || (stride == 0 && size > 1) {
			return nil, fmt.Errorf("start %d, stride %d, size %d in a team of %d", start, stride, size, n)
		}
		last := int64(start) + int64(stride)*int64(size-1)
		if last < 0 || last >= int64(n) {
			return nil, fmt.Errorf("start %d, stride %d, size %d runs past a team of %d", start, stride, size, n)
		}
		idx := make([]int, size)
		for i := range idx {
			idx[i] = start + i*stride
		}
		return [][]int{idx}, nil
	})
	if err != nil {
		return nil, err
	}
	return teams[0], nil
}

// Split2D arranges the parent's PEs in rows of xrange (the last row may be
// partial) and returns the caller's row (x) and column (y) teams
// (shmem_team_split_2d); an xrange above the parent's size is the size.
// Collective over the parent, with the failure rules of SplitStrided.
func (t *Team) Split2D(xrange int) (x, y *Team, err error) {
	const op = "Split2D"
	teams, err := t.split(op, []int64{2, int64(xrange)}, func(n int) ([][]int, error) {
		if xrange < 1 {
			return nil, fmt.Errorf("xrange %d", xrange)
		}
		xr := min(xrange, n)
		rows := (n + xr - 1) / xr
		var lists [][]int
		for r := 0; r < rows; r++ {
			var row []int
			for i := r * xr; i < min(n, (r+1)*xr); i++ {
				row = append(row, i)
			}
			lists = append(lists, row)
		}
		for c := 0; c < xr; c++ {
			var col []int
			for i := c; i < n; i += xr {
				col = append(col, i)
			}
			lists = append(lists, col)
		}
		return lists, nil
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
// lists (parent indices), and the caller gets, for each new team, the team
// if it is a member and nil if not.
func (t *Team) split(op string, params []int64, build func(n int) ([][]int, error)) ([]*Team, error) {
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
	t.splits++
	seq := t.splits
	payload := make([]byte, 8*(len(params)+1))
	for i, v := range params {
		binary.LittleEndian.PutUint64(payload[8*i:], uint64(v))
	}
	binary.LittleEndian.PutUint64(payload[8*len(params):], t.pool.free())
	all, err := t.rt.Agree(op, "team/"+t.id, seq, t.members, t.me, payload)
	if err != nil {
		return nil, err
	}
	mine := payload[:8*len(params)]
	free := make([]uint64, len(all))
	var differ []int
	for i, b := range all {
		if len(b) != len(payload) || string(b[:len(mine)]) != string(mine) {
			differ = append(differ, t.members[i])
			continue
		}
		free[i] = binary.LittleEndian.Uint64(b[len(mine):])
	}
	if len(differ) > 0 {
		return nil, errs.New(op, t.rt.MyPE(), errs.NoPE, errs.ErrInvalidArgument,
			"PEs %v passed other arguments than this PE (collective calls must match on every member of team %s)", differ, t.id)
	}
	lists, err := build(len(t.members))
	if err != nil {
		return nil, errs.New(op, t.rt.MyPE(), errs.NoPE, errs.ErrInvalidArgument, "%v", err)
	}
	// Each new team takes the lowest slot free on all of its members; a
	// slot given to one team is no longer free on its members, so teams
	// that share a PE (Split2D's rows and columns) get different slots.
	// Every member computes this from the same bitmaps, so all agree.
	slots := make([]int, len(lists))
	for i, l := range lists {
		mask := ^uint64(0)
		for _, j := range l {
			mask &= free[j]
		}
		if mask == 0 {
			return nil, errs.New(op, t.rt.MyPE(), errs.NoPE, errs.ErrOutOfMemory,
				"no team slot is free on every member of the new team (%d slots per PE; destroy teams to reuse them)", t.pool.Slots())
		}
		slots[i] = bits.TrailingZeros64(mask)
		for _, j := range l {
			free[j] &^= 1 << slots[i]
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
		nt := newTeam(t.rt, t.id+"/"+strconv.FormatUint(seq, 10)+"."+strconv.Itoa(i), world, slots[i], false)
		t.pool.track(nt, t.rt.ActorRoot().Spawn(actorProps(nt)))
		out[i] = nt
	}
	return out, nil
}

// Destroy ends the team (shmem_team_destroy): it is collective over the
// team, so it first synchronizes the members (no member still writes into
// the team's slot after that), then zeroes and returns the slot to the
// pool and stops the team's actor. Destroying a team twice does nothing;
// TeamWorld and TeamShared cannot be destroyed (ErrInvalidArgument).
func (t *Team) Destroy() error {
	const op = "Destroy"
	if t == nil {
		return t.usable(op)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.destroyed {
		return nil
	}
	if t.root {
		return errs.New(op, t.rt.MyPE(), errs.NoPE, errs.ErrInvalidArgument, "team %s cannot be destroyed", t.id)
	}
	err := t.rt.Quiet()
	if err == nil {
		err = t.sync(op)
	}
	t.destroyed = true
	if err == nil {
		// After a failed sync a peer may still write into the slot, so it
		// is not reused; the PE is failing anyway.
		t.pool.release(t.rt.Local(), t.slot)
	}
	if pid := t.pool.untrack(t); pid != nil {
		_ = t.rt.ActorRoot().StopFuture(pid).Wait()
	}
	return err
}

// timeoutInfo bounds a query to a team actor, which lives in this process
// and answers at once unless the actor system is shutting down.
const timeoutInfo = 10 * time.Second

// Info is what a team's actor answers about its team.
type Info struct {
	ID      string
	Slot    int
	Members []int // world ranks, team order
	Me      int
}

// infoRequest asks a team actor for its Info. Team actors are local to
// their PE, so the message never leaves the process.
type infoRequest struct{}

// actorProps returns the actor that owns a team's identity on one member:
// its slot and membership. The data path never consults it; it answers
// queries (Info) and its lifetime is the team's.
func actorProps(t *Team) *actor.Props {
	info := Info{ID: t.id, Slot: t.slot, Members: append([]int(nil), t.members...), Me: t.me}
	return actor.PropsFromFunc(func(ctx actor.Context) {
		if _, ok := ctx.Message().(infoRequest); ok {
			ctx.Respond(info)
		}
	})
}

// Info asks the team's actor what it knows about the team. TeamWorld and
// TeamShared have no actor; their Info comes from the team itself.
func (t *Team) Info() (Info, error) {
	const op = "TeamInfo"
	if t == nil {
		return Info{}, t.usable(op)
	}
	if t.root {
		return Info{ID: t.id, Slot: t.slot, Members: append([]int(nil), t.members...), Me: t.me}, nil
	}
	t.pool.mu.Lock()
	pid := t.pool.actors[t]
	t.pool.mu.Unlock()
	if pid == nil {
		return Info{}, errs.New(op, t.rt.MyPE(), errs.NoPE, errs.ErrInvalidArgument, "team %s was destroyed", t.id)
	}
	res, err := t.rt.ActorRoot().RequestFuture(pid, infoRequest{}, timeoutInfo).Result()
	if err != nil {
		return Info{}, errs.New(op, t.rt.MyPE(), errs.NoPE, errs.ErrTimeout, "team actor: %v", err)
	}
	info, ok := res.(Info)
	if !ok {
		return Info{}, errs.New(op, t.rt.MyPE(), errs.NoPE, errs.ErrInvalidArgument, "team actor answered %T", res)
	}
	return info, nil
}
