package coll

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/team"
	"github.com/goshmem/shmem/transport"
)

// Operation identity. Every team-wide operation is numbered by the team
// actor (number); the member publishes (number, kind) in the operation word
// of its own team slot with one local atomic store: free on the fast path,
// nobody reads it then. Only a member that has waited a while for a peer
// reads its peers' words (CheckPeers, remote atomic reads) and decides:
//   - a peer at the same number with another kind called another
//     collective: the operation can never complete (ErrInvalidArgument,
//     naming every member and what it called);
//   - a peer that called Finalize (its operation word says Finalize at this
//     number, or its left word in TeamWorld's slot is set) will never come:
//     ErrPEFailed naming it;
//   - a peer that gave up this operation or an earlier one (its operation
//     timeout ended its wait: gaveUpBit) will never come: ErrPEFailed
//     naming it and the operation it gave up;
//   - a peer behind that gave up the parent team at or before the split
//     that made this one never made it: ErrPEFailed naming it and the
//     operation it gave up (see leftout.go);
//   - a peer ahead has passed this operation, so it took part in it, and
//     a peer behind is on its way (unless it left): keep waiting.
// A member that fails an operation this way keeps its operation word where
// it is and the team is broken from then on (every later operation on it
// fails at once, its sync words no longer agree), so that every other
// member of the operation reaches the same verdict, however late it looks.

// lateWait is how long a member that found a mismatch waits for members
// not there yet before it reports what it knows.
const lateWait = 100 * time.Millisecond

// opWord encodes a numbered operation: number<<8 | kind, with gaveUpBit
// set once the member gave the operation up (see giveup.go).
func opWord(o team.Op) uint64 { return o.Seq<<8 | uint64(o.Kind) }

// gaveUpBit marks an operation word whose member gave that operation up
// (ErrTimeout): it will run no more operations on the team. Kinds are
// below it.
const gaveUpBit = 0x80

func decodeOp(v uint64) team.Op { return team.Op{Seq: v >> 8, Kind: team.Kind(v & 0x7f)} }

// gaveUp reports whether the operation word v says its member gave up.
func gaveUp(v uint64) bool { return v&gaveUpBit != 0 }

// publish stores the member's current operation where its peers read it.
func (t *Team) publish(o team.Op) {
	t.cur.Store(opWord(o))
	t.early, t.left = time.Time{}, time.Time{}
	transport.ApplySignal(t.local, t.l.op, opWord(o), transport.SignalSet)
}

// Blocked is a team operation that a waiting PE checks now and then while
// it waits (CheckPeers) and describes in hang reports and timeouts
// (Waiting, which may be called from any goroutine, only when needed).
type Blocked interface {
	// CheckPeers returns an error when the operation can never complete.
	CheckPeers(op string) error
	// Waiting says what the operation waits for, for reports.
	Waiting() string
}

// Waiting describes the team's current operation. Hang reports call it
// from other goroutines, hence the atomic cur.
func (t *Team) Waiting() string {
	cur := decodeOp(t.cur.Load())
	return fmt.Sprintf("operation %d (%s) of team %s with PEs %s", cur.Seq, cur.Kind, t.a.ID(), Ranges(t.members))
}

// CheckPeers reads every member's operation word (and, for a member not
// at this operation, its left word) and returns the verdict described
// above, or nil while the operation may still complete. op names the
// caller's API call. The caller holds t.mu, in the operation.
func (t *Team) CheckPeers(op string) error {
	me := t.rt.MyPE()
	mine := decodeOp(t.cur.Load())
	if mine.Kind != team.KindFinalize && transport.Load64(t.local, t.l.quit) != 0 {
		// A member gave the team up and said so here (giveup.go): an
		// agreement of the team, which waits on no poisoned word, learns
		// it without reading anyone.
		err := t.whoGaveUp(op)
		t.broken = err
		return err
	}
	at := make([]team.Kind, len(t.members)) // kind at mine.Seq, 0 elsewhere
	var gone []int
	mismatch := false
	quit := -1 // the first member that gave up this operation or an earlier one
	var quitOp team.Op
	var quitIn *Team // nil: this team; else the parent, whose split quit gave up
	for j, w := range t.members {
		if j == t.me {
			at[j] = mine.Kind
			continue
		}
		v, err := t.peek(op, w, t.l.op)
		if err != nil {
			return err
		}
		o := decodeOp(v)
		if gaveUp(v) && o.Seq <= mine.Seq && mine.Kind != team.KindFinalize {
			if quit < 0 {
				quit, quitOp = w, o
			}
			continue
		}
		if o.Seq == mine.Seq {
			at[j] = o.Kind
			switch {
			case o.Kind == team.KindFinalize && mine.Kind != team.KindFinalize:
				gone = append(gone, w)
			case o.Kind != mine.Kind:
				mismatch = true
			}
			continue
		}
		// A member that gave up the parent's split never made this team,
		// whatever its word in this slot says (the slot is free on it, and
		// may hold another team's words since): asked of the member when
		// it looks behind, of this PE's own quit words alone when it looks
		// ahead (no read of a member that took part).
		if lo, ok, err := t.leftOut(op, w, o.Seq < mine.Seq); err != nil {
			return err
		} else if ok && mine.Kind != team.KindFinalize {
			if quit < 0 {
				quit, quitOp, quitIn = w, lo, t.parent
			}
			continue
		}
		if o.Seq > mine.Seq || mine.Kind == team.KindFinalize {
			continue // it passed this operation, so it took part in it
		}
		// Behind: on its way, unless it called Finalize (numbered on
		// TeamWorld, so for other teams only the left word tells). In
		// Destroy a zeroed word may also be a released slot: the peer
		// completed Destroy, and may have finalized since. Its Finalize
		// completed its signals to this PE (Quiet) before it set its left
		// word, so this PE's wait ends at its next look, before the grace
		// below runs out; a peer that called Finalize without Destroy
		// never comes, and is named (the wait used to go on for ever).
		if left, err := t.peek(op, w, t.pool.layout(0).left); err != nil {
			return err
		} else if left != 0 {
			gone = append(gone, w)
		}
	}
	var err error
	switch {
	case quit >= 0 && quitIn != nil:
		err = t.leftOutErr(op, quit, quitOp)
	case quit >= 0:
		// Definite: the member wrote it itself, and nothing it does
		// later changes it.
		err = t.gaveUpErr(op, quit, quitOp)
	case mismatch && slices.Contains(at, 0) && (t.early.IsZero() || time.Since(t.early) < lateWait):
		// Members not there yet may still arrive, and the message is
		// better with what they called: wait for them a little first.
		if t.early.IsZero() {
			t.early = time.Now()
		}
		return nil
	case mismatch:
		err = errs.New(op, me, errs.NoPE, errs.ErrInvalidArgument,
			"operation %d of team %s: %s (collective calls must come in the same order on every member)",
			mine.Seq, t.a.ID(), t.callers(at))
	case len(gone) > 0 && !t.scheduledChecks() && (t.left.IsZero() || time.Since(t.left) < lateWait):
		// A member that finalized may have done so because another
		// failed (a kill -9): the notice of that failure, on its way to
		// this PE, ends the wait naming the PE that failed. Wait for it
		// a little before blaming the one that finalized. (Under a
		// simulated network's scheduler, checks run only once the world
		// stands still: every notice has arrived, and no later check
		// would come to blame it.)
		if t.left.IsZero() {
			t.left = time.Now()
		}
		return nil
	case len(gone) > 0:
		t.rt.FinalizedEarly(gone[0])
		err = errs.New(op, me, gone[0], errs.ErrPEFailed, "%s called Finalize while this PE waits in %s (operation %d of team %s)",
			peNames(gone), op, mine.Seq, t.a.ID())
	default:
		return nil
	}
	t.broken = err
	return err
}

// peek reads the 8-byte word at off in world PE w's heap: straight from
// the mapping where the path has one (no message, so a simulated world's
// trace and virtual time do not depend on when a waiter looked), else
// with a fetching atomic.
func (t *Team) peek(op string, w int, off uint64) (uint64, error) {
	path, err := t.rt.Path(op, w)
	if err != nil {
		return 0, err
	}
	if mem := path.Ptr(off, 8); mem != nil {
		return transport.Load64(mem, 0), nil
	}
	// The path names its own operation (Atomic), which the caller did
	// not call: a Malloc whose peer died read "Atomic (PE 0 -> PE 1)".
	v, err := path.Atomic(transport.AtomicFetch, 8, off, 0, 0)
	return v, errs.As(op, t.rt.MyPE(), err)
}

// callers says what each member called at one operation number, grouped
// by call: "PE 0 called FCollect, PEs 1-3 Reduce"; a member not there yet
// is "not there yet".
func (t *Team) callers(at []team.Kind) string {
	var order []team.Kind
	by := map[team.Kind][]int{}
	for j, k := range at {
		if _, ok := by[k]; !ok {
			order = append(order, k)
		}
		by[k] = append(by[k], t.members[j])
	}
	var b strings.Builder
	for i, k := range order {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(peNames(by[k]))
		if i == 0 {
			b.WriteString(" called")
		}
		if k == 0 {
			b.WriteString(" not there yet")
		} else {
			b.WriteString(" " + k.String())
		}
	}
	return b.String()
}

// MarkLeft sets this PE's left word in TeamWorld's slot: from now on every
// PE that waits for it in any team learns that it called Finalize.
func MarkLeft(rt Runtime) {
	transport.ApplySignal(rt.Local(), rt.TeamPool().layout(0).left, 1, transport.SignalSet)
}

// Left reports whether world PE w has called Finalize, reading its left
// word; op names the caller's call in errors.
func Left(rt Runtime, op string, w int) (bool, error) {
	path, err := rt.Path(op, w)
	if err != nil {
		return false, err
	}
	v, err := path.Atomic(transport.AtomicFetch, 8, rt.TeamPool().layout(0).left, 0, 0)
	return v != 0, errs.As(op, rt.MyPE(), err)
}

// Broken returns why the team can no longer run operations, or nil.
func (t *Team) Broken() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.broken
}

// peNames writes world ranks as "PE 3" or "PEs 1-3, 5".
func peNames(pes []int) string {
	if len(pes) == 1 {
		return fmt.Sprintf("PE %d", pes[0])
	}
	return "PEs " + Ranges(pes)
}

// Ranges writes ascending ranks compactly: "0-3, 5, 7-8".
func Ranges(pes []int) string {
	pes = slices.Clone(pes)
	slices.Sort(pes)
	var b strings.Builder
	for i := 0; i < len(pes); {
		j := i
		for j+1 < len(pes) && pes[j+1] == pes[j]+1 {
			j++
		}
		if i > 0 {
			b.WriteString(", ")
		}
		if j > i {
			fmt.Fprintf(&b, "%d-%d", pes[i], pes[j])
		} else {
			fmt.Fprintf(&b, "%d", pes[i])
		}
		i = j + 1
	}
	return b.String()
}

// scheduledChecks reports whether the runtime's peer checks are driven by
// a simulated network's scheduler rather than by real time
// (core.PeerChecker).
func (t *Team) scheduledChecks() bool {
	sc, ok := t.rt.(interface{ ScheduledChecks() bool })
	return ok && sc.ScheduledChecks()
}
