package actors

import (
	"cmp"
	"fmt"
	"slices"
)

// Coordinator is the agreement coordinator: it gathers one payload from
// each member of a group and answers every member with all of them, in
// group-rank order. One coordinator serves a world (it runs on world rank
// 0); the agreement behind collective allocation, team creation and
// Finalize rests on it. A member that fails aborts every round it belongs
// to, so no member waits forever for it, and a round that starts after the
// failure is refused at once.
//
// Coordinator is a pure state machine: Step takes one message and returns
// the replies to send, touching nothing else. Set NPEs before the first
// Step. It is not safe for concurrent use; its actor
// (internal/actorsys.NewCoordinator) feeds it one message at a time.
//
// A Gather comes from any PE of the job, which an insider (a process that
// has the job secret) may forge: a round's group must be distinct world
// ranks of the world (so a round holds at most NPEs slots), and the open
// rounds together hold at most openSlots(NPEs) slots and maxOpenPayload
// bytes of payloads; a Gather beyond is refused (only its sender is
// answered), so a stream of rounds that never complete cannot exhaust the
// coordinator's memory.
type Coordinator struct {
	// NPEs is the world's size; 0 (not known yet) refuses every Gather.
	NPEs int

	rounds map[roundKey]*round
	failed map[int]string // world rank -> reason
	slots  int            // group members of the open rounds, summed
	bytes  int            // payload bytes the open rounds hold
}

// Bounds on what the open rounds hold. A PE waits in one agreement at a
// time per thread, and a group's members contribute in the same order, so
// a world's open rounds hold a few slots per PE: openSlots leaves room for
// 64 per PE. Agreement payloads are small (sizes, addresses, a team's
// parameters).
const (
	slotsPerPE     = 64
	slotsSlack     = 4096
	maxOpenPayload = 64 << 20
)

func openSlots(npes int) int { return slotsPerPE*npes + slotsSlack }

type roundKey struct {
	domain string
	seq    uint64
}

type round struct {
	members  []int
	payloads [][]byte
	senders  []any // by group rank; nil until that member contributed
	got      int
}

// Reply is a message the coordinator sends: Msg to To, which is the
// sender a Gather came from (an opaque handle to the coordinator, such as
// an actor's PID).
type Reply struct {
	To  any
	Msg *GatherReply
}

// Step handles one message and returns the replies it causes, in a
// deterministic order. from is the sender of a Gather, to which its reply
// goes; a Gather without a sender is dropped (nobody to answer). A
// *PEFailed aborts the rounds its rank belongs to. Other messages are
// ignored.
func (c *Coordinator) Step(from any, m any) []Reply {
	if c.rounds == nil {
		c.rounds, c.failed = map[roundKey]*round{}, map[int]string{}
	}
	switch m := m.(type) {
	case *Gather:
		if from == nil {
			return nil
		}
		return c.gather(from, m)
	case *PEFailed:
		return c.peFailed(m)
	}
	return nil
}

func (c *Coordinator) peFailed(m *PEFailed) []Reply {
	if _, known := c.failed[m.Rank]; known {
		return nil // a notice that arrives again (flooding, several detectors)
	}
	c.failed[m.Rank] = m.Reason
	var keys []roundKey
	for k, r := range c.rounds {
		if slices.Contains(r.members, m.Rank) {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b roundKey) int {
		return cmp.Or(cmp.Compare(a.domain, b.domain), cmp.Compare(a.seq, b.seq))
	})
	var out []Reply
	for _, k := range keys {
		out = append(out, c.finish(k, &GatherReply{Err: "PE failed: " + m.Reason, Failed: m.Rank})...)
	}
	return out
}

func (c *Coordinator) gather(from any, g *Gather) []Reply {
	refuse := func(format string, args ...any) []Reply {
		return []Reply{{from, &GatherReply{Err: fmt.Sprintf("round %s/%d refused: ", g.Domain, g.Seq) + fmt.Sprintf(format, args...), Failed: -1}}}
	}
	if g.N <= 0 || g.Rank < 0 || g.Rank >= g.N || len(g.Members) != g.N {
		return []Reply{{from, &GatherReply{Err: fmt.Sprintf("bad round %s/%d: rank %d of %d", g.Domain, g.Seq, g.Rank, g.N), Failed: -1}}}
	}
	if c.NPEs <= 0 {
		return refuse("the coordinator does not know the world yet")
	}
	if g.N > c.NPEs {
		return refuse("a group of %d in a world of %d", g.N, c.NPEs)
	}
	if m, ok := badMember(g.Members, c.NPEs); !ok {
		return refuse("group member %d is not a distinct world rank of 0..%d", m, c.NPEs-1)
	}
	for _, m := range g.Members {
		if reason, dead := c.failed[m]; dead {
			return []Reply{{from, &GatherReply{Err: "PE failed: " + reason, Failed: m}}}
		}
	}
	k := roundKey{g.Domain, g.Seq}
	r := c.rounds[k]
	if r == nil {
		if c.slots+g.N > openSlots(c.NPEs) {
			return refuse("the coordinator holds %d open rounds (%d group slots, bound %d): too many rounds that never complete", len(c.rounds), c.slots, openSlots(c.NPEs))
		}
	} else if !slices.Equal(r.members, g.Members) || r.senders[g.Rank] != nil {
		out := c.finish(k, &GatherReply{Err: fmt.Sprintf("round %s/%d: members disagree on the group (rank %d)", g.Domain, g.Seq, g.Rank), Failed: -1})
		return append(out, Reply{from, &GatherReply{Err: "group mismatch", Failed: -1}})
	}
	if c.bytes+len(g.Payload) > maxOpenPayload {
		return refuse("the open rounds hold %d bytes of payloads, bound %d", c.bytes, maxOpenPayload)
	}
	if r == nil {
		r = &round{members: g.Members, payloads: make([][]byte, g.N), senders: make([]any, g.N)}
		c.rounds[k] = r
		c.slots += g.N
	}
	c.bytes += len(g.Payload)
	r.payloads[g.Rank] = g.Payload
	r.senders[g.Rank] = from
	if r.got++; r.got == g.N {
		return c.finish(k, &GatherReply{Payloads: r.payloads, Failed: -1})
	}
	return nil
}

// finish ends round k, answering every member that contributed with reply.
func (c *Coordinator) finish(k roundKey, reply *GatherReply) []Reply {
	r := c.rounds[k]
	delete(c.rounds, k)
	c.slots -= len(r.members)
	for _, p := range r.payloads {
		c.bytes -= len(p)
	}
	var out []Reply
	for _, s := range r.senders {
		if s != nil {
			out = append(out, Reply{s, reply})
		}
	}
	return out
}

// badMember returns a member that is not a world rank of 0..npes-1 or
// repeats an earlier one, and false; or true when every member is fine.
func badMember(members []int, npes int) (int, bool) {
	seen := make([]bool, npes)
	for _, m := range members {
		if m < 0 || m >= npes || seen[m] {
			return m, false
		}
		seen[m] = true
	}
	return 0, true
}

// Pending returns how many rounds are waiting for contributions.
func (c *Coordinator) Pending() int { return len(c.rounds) }
