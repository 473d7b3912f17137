package coll

import (
	"errors"
	"fmt"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/team"
	"github.com/goshmem/shmem/transport"
)

// Giving up an operation. A member whose wait in a team operation ends
// with ErrTimeout (WithOpTimeout, or an agreement's own bound) leaves the
// operation half done: it may have signalled some members and not others,
// and it runs nothing more on the team. Its peers must neither wait for
// it nor complete an operation it did not finish with them. So before its
// call returns it
//   - breaks the team on itself: every later operation on it fails at
//     once with the timeout;
//   - marks its operation word (gaveUpBit), which it never changes again
//     (Finalize leaves a broken team's word as it is): a peer that waits
//     long reads it (CheckPeers) and fails naming it and the operation;
//   - writes its world rank + 1 and its operation word into every
//     member's quit words, so that a member that finds a poisoned word
//     can name it and the operation without reaching it (over the network
//     a PE that gave up may have ended its process);
//   - then poisons the words its peers wait on (poisonBit, or-ed in, so that
//     no increment or later signal of another member clears it): every
//     dissemination word of every member (Barrier, Sync, Destroy and the
//     collectives' entry) and its own signal and acknowledgement words in
//     every member. A member blocked on any of them wakes at once, and a
//     member that reaches any later operation of the team, or this one
//     late, fails at its first wait: no barrier or collective on the team
//     completes from then on.
// The poisoned words reach the members that wait on this member, or are
// in an entry or a barrier. A member in a collective's data steps waits
// only on a few peers (a broadcast's root on none), so every wait also
// looks at the quit words when it ends (waitWord), and every collective
// before it returns success (opEnd.unlock): a member that learnt of the
// give-up before it completed fails too, and one whose wait for a peer
// that failed so never ends is woken by its peer check (CheckPeers reads
// the quit words first).
// A member that completed the operation before the quit words reached it
// keeps its result: in a barrier each member had arrived, and its next
// operation on the team fails. Which members are in time for that is a
// race nothing can close, since the timeout may fire just after the
// member's last signal went out.

// poisonBit marks a word of a team's slot as poisoned by a member that
// gave up (see above). No counter or signal value reaches it, and a word
// holding it is at least any value a wait wants, so the wait ends and
// then looks (waitWord).
const poisonBit = 1 << 63

// GiveUp records that this member gave up op, its current operation on
// the team, with err (wrapping ErrTimeout): the team is broken on it, its
// operation word says so and the peers' words are poisoned (see above).
// The core runtime calls it when an agreement of the team (a collective
// allocation on TeamWorld) times out; the team's own waits call giveUp.
func (t *Team) GiveUp(op string, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.giveUp(op, err)
}

// giveUp is GiveUp with t.mu held (or the operation otherwise serialized:
// core's collective lock around TeamWorld's allocations).
func (t *Team) giveUp(op string, err error) {
	if t.broken != nil {
		return
	}
	t.broken = err
	transport.ApplySignal(t.local, t.l.op, t.cur.Load()|gaveUpBit, transport.SignalSet)
	t.poison(op)
}

// poison writes this member's rank and operation into every other
// member's quit words and then (fenced: the name lands first) or-s
// poisonBit into the words of every other member that a member waits on
// in the team's barriers, syncs, destroy and collective entries, and into
// this member's signal and acknowledgement words in each; then it fences
// again, so that a put this member makes afterwards to a member (telling
// it that it gave up) lands behind them. It does not wait for them to
// complete: over the network a member may be stopped, and the call that
// gave up must return at its timeout; Finalize completes them. A member
// that cannot be reached is skipped: it failed, and its peers hear of
// that.
func (t *Team) poison(op string) {
	rounds := len(t.ahead)
	paths := make([]transport.Path, len(t.members))
	for j, w := range t.members {
		if j == t.me {
			continue
		}
		path, err := t.rt.Path(op, w)
		if err == nil && path.AtomicPost(transport.AtomicSet, 8, t.l.quitOp, t.cur.Load()|gaveUpBit) == nil &&
			path.AtomicPost(transport.AtomicSet, 8, t.l.quit, uint64(t.rt.MyPE())+1) == nil {
			paths[j] = path
		}
	}
	t.rt.Fence()
	for _, path := range paths {
		if path == nil {
			continue
		}
		post := func(off uint64) bool {
			return path.AtomicPost(transport.AtomicFetchOr, 8, off, poisonBit) == nil
		}
		ok := true
		for set := syncSet(0); set < syncSets && ok; set++ {
			base := t.l.psync + uint64(8*t.l.rounds)*uint64(set)
			for k := 0; k < rounds && ok; k++ {
				ok = post(base + uint64(8*k))
			}
		}
		for k := 0; k < rounds && ok; k++ {
			ok = post(t.l.entrySig + uint64(8*k))
		}
		_ = ok && post(t.sigWord(t.me)) && post(t.ackWord(t.me))
	}
	t.rt.Fence()
}

// poisoned is the error of a wait that found its word poisoned: a member
// gave up an operation of the team, which one its quit words say.
// The team is broken from then on, like after any verdict of CheckPeers.
func (t *Team) poisoned(op string) error {
	err := t.whoGaveUp(op)
	t.broken = err
	return err
}

// whoGaveUp returns the error naming the member that gave up and its
// operation, as this member's quit words say (the last to give up, if
// several did).
func (t *Team) whoGaveUp(op string) error {
	q := transport.Load64(t.local, t.l.quit)
	if q == 0 {
		// Cannot happen: the quit words land before the poison.
		return errs.New(op, t.rt.MyPE(), errs.NoPE, errs.ErrPEFailed,
			"a member of team %s gave up one of its operations when its wait timed out: this PE's %s (operation %d) cannot complete",
			t.a.ID(), op, decodeOp(t.cur.Load()).Seq)
	}
	return t.gaveUpErr(op, int(q-1), decodeOp(transport.Load64(t.local, t.l.quitOp)))
}

// quitSaid reports whether a member that gave up the team has said so in
// this member's quit words (see poison): the team's operations can no
// longer complete for every member, so none completes on this one.
func (t *Team) quitSaid() bool { return transport.Load64(t.local, t.l.quit) != 0 }

// orPoisoned returns, for a team operation's step that failed with err
// reaching a peer, the poison's verdict instead when the word this member
// waits on at off is poisoned: a peer that gave up and ended its process
// over the network is unreachable, and the member that gave up is the
// cause to name.
func (t *Team) orPoisoned(op string, off uint64, err error) error {
	if transport.Load64(t.local, off)&poisonBit != 0 {
		return t.poisoned(op)
	}
	return err
}

// gaveUpErr is the error of a member waiting in op when world PE w gave up
// the team's operation o.
func (t *Team) gaveUpErr(op string, w int, o team.Op) error {
	mine := decodeOp(t.cur.Load())
	detail := fmt.Sprintf("PE %d gave up operation %d (%s) of team %s when its wait timed out", w, o.Seq, o.Kind, t.a.ID())
	if o.Seq == mine.Seq {
		detail += fmt.Sprintf(": this PE's %s cannot complete", op)
	} else {
		detail += fmt.Sprintf(" and runs no more operations on the team: this PE's %s (operation %d) cannot complete", op, mine.Seq)
	}
	return errs.New(op, t.rt.MyPE(), w, errs.ErrPEFailed, "%s", detail)
}

// Absent returns the members that have not reached the operation this
// member waits in (their operation words are behind it, and they did not
// give up), and says so, for the error of an operation timeout; nil when
// every member got there. op names the call.
func (t *Team) Absent(op string) ([]int, string) {
	mine := decodeOp(t.cur.Load())
	var out []int
	for j, w := range t.members {
		if j == t.me {
			continue
		}
		v, err := t.peek(op, w, t.l.op)
		if err == nil && decodeOp(v).Seq < mine.Seq && !gaveUp(v) {
			out = append(out, w)
		}
	}
	switch len(out) {
	case 0:
		return nil, ""
	case 1:
		return out, fmt.Sprintf("PE %d has not arrived", out[0])
	}
	return out, "PEs " + Ranges(out) + " have not arrived"
}

// timedOut reports whether err ended a wait of the team's by a timeout,
// which makes the member give the operation up.
func timedOut(err error) bool { return errors.Is(err, errs.ErrTimeout) }
