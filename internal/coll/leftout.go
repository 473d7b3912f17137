package coll

import (
	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/team"
	"github.com/goshmem/shmem/transport"
)

// Members left out of a split. A member whose split of the parent times
// out gives the parent up (giveup.go) and makes no team; the others'
// round may still complete with its proposal (it reached the coordinator,
// the reply came too late). A member that learns of the give-up before
// its round returns fails the split (Team.split); one that learns later
// holds a team naming a member that never made it, whose words in the
// team's slot stay zero (the slot is free there). Such a member is behind
// in every operation of the team, so the peer check of a wait, which
// reads every member, asks the parent whether it gave up: then the
// operation fails naming it, instead of waiting for it until it
// finalizes, or (Destroy) taking its zeroed word for a completed Destroy.

// leftOut reports whether world PE w, a member of t not at this member's
// operation, gave up t's parent at or before the split that made t, and
// which operation of the parent it gave up: from this member's own quit
// words in the parent's slot if they name w, else, when read, from w's
// operation word there (the parent's slot stays taken on w: a given-up
// team is never released). A parent this member destroyed was not given
// up (its Destroy's sync completed with every member), and its slot may
// hold another team's words since. op names the caller.
func (t *Team) leftOut(op string, w int, read bool) (team.Op, bool, error) {
	p := t.parent
	if p == nil || p.gone.Load() {
		return team.Op{}, false, nil
	}
	if q := transport.Load64(t.local, p.l.quit); q == uint64(w)+1 {
		if o := decodeOp(transport.Load64(t.local, p.l.quitOp)); o.Seq <= t.splitOp {
			return o, true, nil
		}
	}
	if !read {
		return team.Op{}, false, nil
	}
	v, err := t.peek(op, w, p.l.op)
	if err != nil {
		return team.Op{}, false, err
	}
	o := decodeOp(v)
	return o, gaveUp(v) && o.Seq <= t.splitOp, nil
}

// leftOutErr is the error of a member waiting in op on t when world PE w
// gave up operation o of t's parent, the split that made t or an earlier
// one, and so never made t.
func (t *Team) leftOutErr(op string, w int, o team.Op) error {
	return errs.New(op, t.rt.MyPE(), w, errs.ErrPEFailed,
		"PE %d gave up operation %d (%s) of team %s when its wait timed out and never made team %s: this PE's %s (operation %d) cannot complete",
		w, o.Seq, o.Kind, t.parent.a.ID(), t.a.ID(), op, decodeOp(t.cur.Load()).Seq)
}
