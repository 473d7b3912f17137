package simnet

// Agreements the scheduler waits out. A PE blocked in an agreement runs
// outside the schedule, and two of the scheduler's moves wait for real
// time to pass before they go on without it: a round of peer checks
// (armCheck) and the rejoin of the PEs already back (rejoinLate). Both
// are for agreements that may never end (a member in another collective,
// one that called Finalize). An agreement every member has entered ends
// for sure, in the time its coordinator and goroutines take; on a loaded
// machine (CI's 2 cores running packages side by side under -race) that
// was over the 20 ms check grace now and then, and the round of checks it
// caused made a seed's second run differ from its first (a
// "check round" in one trace of TestLockContentionReplays). Such an
// agreement is waited for instead, whatever real time says.

// roundKey names an agreement: its coordinator round.
type roundKey struct {
	domain string
	seq    uint64
}

// round is an agreement PEs are outside in.
type round struct {
	members int // PEs taking part
	entered int // members that blocked in it
	out     int // members blocked in it still
}

// sure reports whether r ends without anything the scheduler does: every
// member has entered it and one is still to come back.
func (r *round) sure() bool { return r.entered >= r.members && r.out > 0 }

// enterRound records that p blocked in agreement k of members PEs.
func (n *Net) enterRound(p *pe, k roundKey, members int) *round {
	r := n.rounds[k]
	if r == nil {
		r = &round{members: members}
		n.rounds[k] = r
	}
	r.entered++
	r.out++
	p.rounds = append(p.rounds, r)
	return r
}

// leaveRound records that p is back from r (or ended: Exit, die), unless
// it was already counted back.
func (n *Net) leaveRound(p *pe, r *round, k roundKey) {
	for i, q := range p.rounds {
		if q == r {
			p.rounds = append(p.rounds[:i], p.rounds[i+1:]...)
			r.out--
			break
		}
	}
	if r.out == 0 && n.rounds[k] == r {
		delete(n.rounds, k)
	}
}

// leaveRounds counts p back from every agreement it is in (p ended).
func (n *Net) leaveRounds(p *pe) {
	for _, r := range p.rounds {
		r.out--
	}
	p.rounds = p.rounds[:0]
	for k, r := range n.rounds {
		if r.out == 0 {
			delete(n.rounds, k)
		}
	}
}

// roundsSure reports whether some agreement PEs are outside in will end
// without the scheduler: its members' coming back will schedule again.
func (n *Net) roundsSure() bool {
	for _, r := range n.rounds {
		if r.sure() {
			return true
		}
	}
	return false
}
