package coll

// signaler is a path that signals a word with a plain store
// (udma.Path): see signalAndWait.
type signaler interface {
	SignalWord(off, v uint64)
	RingSignaled(off uint64)
}

// signalChecks is how many times signalAndWait looks at its own word
// before it rings the peer it signalled: about the time a signal takes
// between two cores (core's tight poll is as long).
const signalChecks = 256

// signalAndWait is a dissemination round with a member whose heap is
// mapped here: it stores epoch in that member's word at off, then waits
// for its own word at off to reach epoch. An atomic add there (the
// network's way) is a locked instruction, which holds this core until the
// peer's cache line arrives, a round trip, before the wait may start; the
// store goes out while this member already polls, so the two members'
// signals cross in one trip (bench/lineloop, two processes on the 2-core
// VM: 0.31 µs a barrier against 0.51 with the add, when a round trip
// took 1 µs). A store is enough because each word has one
// writer a round, the member 2^k behind, whose count of barriers is the
// one the add would have made.
//
// The peer may be asleep on its bell: the ring, which needs the store
// ordered before its look at the peer's waiters (a full barrier, which
// again waits for the line), comes after the signal has had the time to
// land, once this member's own word is reached or it has looked
// signalChecks times, and before it waits any longer.
//
// A member that gave up the team poisons the word with an atomic or
// (giveup.go), which a later store of the writer's clears; that store
// satisfies the wait, and waitWord's look at the quit words, which the
// one that gave up wrote before the poison, still fails it.
func (t *Team) signalAndWait(op string, s signaler, off, epoch uint64) error {
	s.SignalWord(off, epoch)
	t.wait.off, t.wait.want = off, epoch
	reached := false
	for i := 0; i < signalChecks && !reached; i++ {
		reached = t.wordReached()
	}
	if !reached {
		s.RingSignaled(off)
	}
	err := t.waitWord(op, off, epoch)
	if reached {
		s.RingSignaled(off)
	}
	return err
}
