package coll

import (
	"encoding/binary"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/team"
	"github.com/goshmem/shmem/transport"
)

// Kind names a collective in its Args.
type Kind uint8

// The collectives.
const (
	KindBroadcast Kind = iota + 1
	KindCollect
	KindFCollect
	KindAlltoall
	KindAlltoalls
	KindReduce
)

// Args describes one collective call as this member sees it. Every member
// must pass equal Args; the first step of every collective (the entry,
// below) checks that they do, so mismatched counts, roots, operators,
// element types, strides or destination objects fail with
// ErrInvalidArgument on every member before any data moves.
type Args struct {
	Kind    Kind
	Type    uint64 // element type code
	Elem    int    // element size in bytes
	Count   int    // elements per member (Collect: not compared)
	Root    int
	Op      int
	DstOff  uint64
	DstLen  int // elements
	DStride int
	SStride int
	// Err is a failure of this member's own argument checks. The member
	// still takes part in the entry, so the others learn of it and fail
	// too instead of waiting for data that will never come.
	Err error
}

// kinds numbers each collective among the team's operations.
var kinds = [...]team.Kind{KindBroadcast: team.KindBroadcast, KindCollect: team.KindCollect, KindFCollect: team.KindFCollect,
	KindAlltoall: team.KindAlltoall, KindAlltoalls: team.KindAlltoalls, KindReduce: team.KindReduce}

func (a *Args) hash() uint64 {
	h := uint64(14695981039346656037)
	for _, v := range [...]uint64{uint64(a.Kind), a.Type, uint64(a.Elem), uint64(a.Count), uint64(a.Root),
		uint64(a.Op), a.DstOff, uint64(a.DstLen), uint64(a.DStride), uint64(a.SStride)} {
		for i := 0; i < 8; i++ {
			h ^= (v >> (8 * i)) & 0xff
			h *= 1099511628211
		}
	}
	return h
}

// Signal words carry seq<<stepBits | step: a collective's sequence number
// and a step within it. Each signal word has one writer (the member it is
// indexed by), whose steps to one reader only grow within a collective and
// whose sequence numbers only grow between collectives, so a reader waits
// for "at least" a value and never needs to reset a word. That is what
// makes back-to-back collectives safe without a barrier between them.
const stepBits = 28

func enc(seq uint64, step int) uint64 { return seq<<stepBits | uint64(step) }

func (t *Team) sigWord(j int) uint64 { return t.l.sig + uint64(8*j) }
func (t *Team) ackWord(j int) uint64 { return t.l.ack + uint64(8*j) }

// putSig puts data at off in member j's heap and then sets this member's
// signal word there to v.
func (t *Team) putSig(op string, j int, off uint64, data []byte, v uint64) error {
	path, err := t.rt.Path(op, t.members[j])
	if err != nil {
		return err
	}
	// An earlier signal to j may still be in flight, and unfenced writes
	// to one PE may land in any order: a later, larger signal overtaken
	// by an earlier one would go backwards.
	t.rt.Fence()
	return path.PutSignal(off, data, t.sigWord(t.me), v, transport.SignalSet)
}

// named returns err as a failure of op, the call the user made. A step
// inside it (a path's PutSignal or Atomic, as the runtime settled and
// blamed it; an agreement's peer check) fails under its own name, which
// errs.As moves into the detail: "shmem: Reduce (PE 0 -> PE 2): in
// PutSignal: ...". Errors already of op, and errors that are not an
// *errs.Error (their wrapper's text would be lost), stay as they are.
func named(op string, err error) error {
	if e, ok := err.(*errs.Error); !ok || e.Op == op {
		return err
	}
	return errs.As(op, errs.NoPE, err)
}

// begin starts a collective: it takes the next sequence number and runs
// the entry, a dissemination exchange (log2 n rounds) of the minimum and
// maximum hash of every member's Args and of whether any member rejected
// its own. Min and max are idempotent, so after the last round every member
// holds them over the whole team and all reach the same verdict. The entry
// also guarantees that every member has left the previous collective, so
// this one may write into any member's destination and scratch at once.
// Entry data is double-buffered by sequence parity: a member can be at most
// one collective ahead of another.
func (t *Team) begin(op string, a *Args) (uint64, error) {
	t.seq++
	seq := t.seq
	t.publishArgs(seq, a)
	h := a.hash()
	lo, hi, bad := h, h, uint64(0)
	if a.Err != nil {
		bad = 1
	}
	local := t.local
	buf := t.buf.entry
	t.rt.Fence() // the previous collective's signals land before this one's
	for k, peer := range t.ahead {
		sig := t.l.entrySig + uint64(8*k)
		path, err := t.rt.Path(op, peer)
		if err != nil {
			return seq, t.orPoisoned(op, sig, err)
		}
		binary.LittleEndian.PutUint64(buf[0:], lo)
		binary.LittleEndian.PutUint64(buf[8:], hi)
		binary.LittleEndian.PutUint64(buf[16:], bad)
		data := t.l.entryData + uint64(24*(int(seq&1)*t.l.rounds+k))
		if err := path.PutSignal(data, buf[:], sig, seq, transport.SignalSet); err != nil {
			return seq, t.orPoisoned(op, sig, err)
		}
		if err := t.waitWord(op, sig, seq); err != nil {
			return seq, err
		}
		in := local[data : data+24]
		lo = min(lo, binary.LittleEndian.Uint64(in[0:]))
		hi = max(hi, binary.LittleEndian.Uint64(in[8:]))
		bad |= binary.LittleEndian.Uint64(in[16:])
	}
	switch {
	case a.Err != nil:
		return seq, a.Err
	case bad != 0:
		return seq, errs.New(op, t.rt.MyPE(), errs.NoPE, errs.ErrInvalidArgument, "another member of team %s rejected its arguments (%s)",
			t.a.ID(), t.argsDiffer(op, seq, a))
	case lo != hi:
		return seq, errs.New(op, t.rt.MyPE(), errs.NoPE, errs.ErrInvalidArgument,
			"members of team %s passed different arguments: %s", t.a.ID(), t.argsDiffer(op, seq, a))
	}
	return seq, nil
}

// lockedBegin locks t, checks it is usable and runs begin; the caller
// defers the returned opEnd's unlock, with its error result, whatever the
// error.
func (t *Team) lockedBegin(op string, a *Args) (uint64, opEnd, error) {
	if t == nil {
		return 0, opEnd{}, t.usable(op)
	}
	t.mu.Lock()
	if err := t.usable(op); err != nil {
		return 0, opEnd{t: t}, err
	}
	if err := t.number(op, kinds[a.Kind]); err != nil {
		return 0, opEnd{t: t}, err
	}
	t.timeOp(op, false)
	seq, err := t.begin(op, a)
	return seq, opEnd{t: t, op: op, timed: true}, err
}

// opEnd ends what lockedBegin began. A value, not a closure: a closure
// over t and op escaped, one allocation per collective per PE.
type opEnd struct {
	t     *Team // nil: nothing was locked
	op    string
	timed bool // the operation's timing started
}

// unlock stops the operation's timing, if it started, and unlocks the
// team. A collective about to return success (*err nil) on a member of a
// team that another member gave up fails instead, naming that member
// (see giveup.go): its last steps waited on other peers, or on none.
func (e opEnd) unlock(err *error) {
	if e.t == nil {
		return
	}
	if *err == nil && e.t.quitSaid() {
		*err = e.t.poisoned(e.op)
	}
	if e.timed {
		e.t.timeOp(e.op, true)
	}
	e.t.mu.Unlock()
}
