package simnet

import "sort"

// Call is one team operation (a barrier, a sync or a data collective) as
// the PEs that took part in it ran it, in virtual nanoseconds.
type Call struct {
	Team string
	Seq  uint64 // its number on the team
	Op   string // as the first member named it: BarrierAll, FCollect, ...
	PEs  int    // members that returned from it
	// FirstIn and LastIn are the clocks of its first and last member's
	// entry; LastOut the clock of its last member's return.
	FirstIn, LastIn, LastOut float64
}

type callKey struct {
	team string
	seq  uint64
}

// TeamOp records PE rank's entry into (end false) or return from (end
// true) operation seq of team (core.Net).
func (n *Net) TeamOp(rank int, team string, seq uint64, op string, end bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	clock := n.pes[rank].clock
	k := callKey{team, seq}
	c := n.calls[k]
	if c == nil {
		if n.calls == nil {
			n.calls = map[callKey]*Call{}
		}
		c = &Call{Team: team, Seq: seq, Op: op, FirstIn: clock, LastIn: clock}
		n.calls[k] = c
	}
	if end {
		c.PEs++
		c.LastOut = max(c.LastOut, clock)
		return
	}
	c.FirstIn, c.LastIn = min(c.FirstIn, clock), max(c.LastIn, clock)
}

// sortedCalls returns the calls by first entry, then team and number.
func (n *Net) sortedCalls() []Call {
	out := make([]Call, 0, len(n.calls))
	for _, c := range n.calls {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.FirstIn != b.FirstIn {
			return a.FirstIn < b.FirstIn
		}
		if a.Team != b.Team {
			return a.Team < b.Team
		}
		return a.Seq < b.Seq
	})
	return out
}
