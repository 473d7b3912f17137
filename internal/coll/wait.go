package coll

import "github.com/goshmem/shmem/transport"

// waitFor is the word a member waits on in its own heap (Team.local) and
// the value it waits for. A team waits on one word at a time, with t.mu
// held, so one waitFor per team serves every wait of its operations.
type waitFor struct {
	off, want uint64
	// reached is t.wordReached, bound once when the team is made: a
	// closure made per wait escapes through Runtime.WaitBlocked, one
	// allocation per barrier round and per collective step.
	reached func() bool
}

// wordReached reports whether the word t waits on holds its value or more.
func (t *Team) wordReached() bool { return transport.Load64(t.local, t.wait.off) >= t.wait.want }

// waitWord waits until this member's word at off is at least want; t.mu
// is held. A word poisoned by a member that gave up the team (poisonBit:
// at least any want) fails the wait, naming that member, and so does any
// wait that ends once a member has said here that it gave up (its quit
// word): a collective's data steps wait on a few peers only, which may
// not include that member, and must not complete an operation it did not
// finish. A wait that times out gives the operation up (see giveup.go).
func (t *Team) waitWord(op string, off, want uint64) error {
	t.wait.off, t.wait.want = off, want
	if !t.wordReached() {
		if err := t.rt.WaitBlocked(op, t, off, t.wait.reached); err != nil {
			if timedOut(err) {
				t.giveUp(op, err)
			}
			return err
		}
	}
	if transport.Load64(t.local, off)&poisonBit != 0 || t.quitSaid() {
		return t.poisoned(op)
	}
	return nil
}

// waitFrom waits for member j's signal to reach step of collective seq.
func (t *Team) waitFrom(op string, j int, seq uint64, step int) error {
	return t.waitWord(op, t.sigWord(j), enc(seq, step))
}
