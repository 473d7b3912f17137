package udma

// SignalWord stores v in the peer's word at off, an aligned 8-byte word
// that no other PE writes meanwhile (a dissemination barrier's: one
// writer a round), and returns without waiting for the store to leave
// this core: a locked instruction (an atomic add or store) waits for the
// peer's cache line, a round trip between cores, before the caller may
// go on to poll its own word, and a barrier then takes two trips instead
// of one. The caller must call RingSignaled for off before it waits
// long or returns, which orders the store before the look at the peer's
// waiters.
func (p *Path) SignalWord(off, v uint64) { storeWord(p.word(off), v) }

// RingSignaled makes the stores before it visible and wakes the peer's
// waiters the word at off concerns (a team operation's included), if any
// is armed: the locked add on a word private to this PE is the full
// barrier that a waiter arming itself and this write need so as not to
// miss each other.
func (p *Path) RingSignaled(off uint64) {
	p.fence.Add(1)
	p.ring(off, 8)
}
