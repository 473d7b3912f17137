package coll

import "github.com/goshmem/shmem/transport"

// waitFor is the word a member waits on in its own heap and the value it
// waits for. A team waits on one word at a time, with t.mu held, so one
// waitFor per team serves every wait of its operations.
type waitFor struct {
	mem       []byte
	off, want uint64
	// reachedFn is reached, bound once when the team is made: a closure
	// made per wait escapes through Runtime.WaitBlocked, one allocation
	// per barrier round and per collective step.
	reachedFn func() bool
}

// reached reports whether the word holds want or more.
func (w *waitFor) reached() bool { return transport.Load64(w.mem, w.off) >= w.want }

// waitWord waits until this member's word at off is at least want; t.mu
// is held.
func (t *Team) waitWord(op string, off, want uint64) error {
	if transport.Load64(t.local, off) >= want {
		return nil
	}
	t.wait.mem, t.wait.off, t.wait.want = t.local, off, want
	return t.rt.WaitBlocked(op, t, t.wait.reachedFn)
}

// waitFrom waits for member j's signal to reach step of collective seq.
func (t *Team) waitFrom(op string, j int, seq uint64, step int) error {
	return t.waitWord(op, t.sigWord(j), enc(seq, step))
}
