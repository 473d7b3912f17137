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
// the replies to send, touching nothing else. The zero value is ready.
// It is not safe for concurrent use; its actor
// (internal/actorsys.NewCoordinator) feeds it one message at a time.
type Coordinator struct {
	rounds map[roundKey]*round
	failed map[int]string // world rank -> reason
}

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
	if g.N <= 0 || g.Rank < 0 || g.Rank >= g.N || len(g.Members) != g.N {
		return []Reply{{from, &GatherReply{Err: fmt.Sprintf("bad round %s/%d: rank %d of %d", g.Domain, g.Seq, g.Rank, g.N), Failed: -1}}}
	}
	for _, m := range g.Members {
		if reason, dead := c.failed[m]; dead {
			return []Reply{{from, &GatherReply{Err: "PE failed: " + reason, Failed: m}}}
		}
	}
	k := roundKey{g.Domain, g.Seq}
	r := c.rounds[k]
	if r == nil {
		r = &round{members: g.Members, payloads: make([][]byte, g.N), senders: make([]any, g.N)}
		c.rounds[k] = r
	}
	if !slices.Equal(r.members, g.Members) || r.senders[g.Rank] != nil {
		out := c.finish(k, &GatherReply{Err: fmt.Sprintf("round %s/%d: members disagree on the group (rank %d)", g.Domain, g.Seq, g.Rank), Failed: -1})
		return append(out, Reply{from, &GatherReply{Err: "group mismatch", Failed: -1}})
	}
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
	var out []Reply
	for _, s := range r.senders {
		if s != nil {
			out = append(out, Reply{s, reply})
		}
	}
	return out
}

// Pending returns how many rounds are waiting for contributions.
func (c *Coordinator) Pending() int { return len(c.rounds) }
