package actors

import (
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/goshmem/shmem/internal/errs"
)

type roundKey struct {
	domain string
	seq    uint64
}

type round struct {
	members  []int
	payloads [][]byte
	senders  []*actor.PID
	got      int
}

// Coordinator gathers one payload from each member of a group and answers
// every member with all of them, in group-rank order. One coordinator serves
// a world; it runs on world rank 0. A member that fails aborts the rounds it
// belongs to, so no member waits forever for it.
type Coordinator struct {
	log    *slog.Logger
	rounds map[roundKey]*round
	failed map[int]string
}

// NewCoordinator returns the props of a coordinator actor.
func NewCoordinator(log *slog.Logger) *actor.Props {
	return actor.PropsFromProducer(func() actor.Actor {
		return &Coordinator{log: log, rounds: map[roundKey]*round{}, failed: map[int]string{}}
	})
}

// Receive handles Gather and PEFailed messages, as decoded values: from
// another process they arrive through the world's control lane, which
// decoded and checked them (Decode).
func (c *Coordinator) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *Gather:
		c.gather(ctx, m)
	case *PEFailed:
		c.failed[m.Rank] = m.Reason
		for k, r := range c.rounds {
			if slices.Contains(r.members, m.Rank) {
				c.finish(ctx, k, r, &GatherReply{Err: "PE failed: " + m.Reason, Failed: m.Rank})
			}
		}
	}
}

func (c *Coordinator) gather(ctx actor.Context, g *Gather) {
	sender := ctx.Sender()
	if sender == nil {
		return
	}
	if g.N <= 0 || g.Rank < 0 || g.Rank >= g.N || len(g.Members) != g.N {
		c.reply(ctx, sender, &GatherReply{Err: fmt.Sprintf("bad round %s/%d: rank %d of %d", g.Domain, g.Seq, g.Rank, g.N), Failed: -1})
		return
	}
	for _, m := range g.Members {
		if reason, dead := c.failed[m]; dead {
			c.reply(ctx, sender, &GatherReply{Err: "PE failed: " + reason, Failed: m})
			return
		}
	}
	k := roundKey{g.Domain, g.Seq}
	r := c.rounds[k]
	if r == nil {
		r = &round{members: g.Members, payloads: make([][]byte, g.N), senders: make([]*actor.PID, g.N)}
		c.rounds[k] = r
	}
	if len(r.members) != g.N || !slices.Equal(r.members, g.Members) || r.senders[g.Rank] != nil {
		c.finish(ctx, k, r, &GatherReply{Err: fmt.Sprintf("round %s/%d: members disagree on the group (rank %d)", g.Domain, g.Seq, g.Rank), Failed: -1})
		c.reply(ctx, sender, &GatherReply{Err: "group mismatch", Failed: -1})
		return
	}
	r.payloads[g.Rank] = g.Payload
	r.senders[g.Rank] = sender
	if r.got++; r.got == g.N {
		c.finish(ctx, k, r, &GatherReply{Payloads: r.payloads, Failed: -1})
	}
}

func (c *Coordinator) finish(ctx actor.Context, k roundKey, r *round, reply *GatherReply) {
	delete(c.rounds, k)
	for _, s := range r.senders {
		if s != nil {
			ctx.Send(s, reply)
		}
	}
}

func (c *Coordinator) reply(ctx actor.Context, to *actor.PID, reply *GatherReply) {
	ctx.Send(to, reply)
}

// RunGather contributes g to its round at the coordinator and returns every
// member's payload. op and me name the caller in errors.
func RunGather(root *actor.RootContext, coord *actor.PID, g *Gather, timeout time.Duration, op string, me int) ([][]byte, error) {
	res, err := root.RequestFuture(coord, g, timeout).Result()
	if err != nil {
		return nil, errs.New(op, me, errs.NoPE, errs.ErrTimeout, "no agreement from the coordinator within %v (%v)", timeout, err)
	}
	reply, ok := res.(*GatherReply)
	if !ok {
		return nil, errs.New(op, me, errs.NoPE, errs.ErrInvalidArgument, "coordinator answered %T", res)
	}
	if reply.Err != "" {
		if reply.Failed >= 0 {
			return nil, errs.New(op, me, reply.Failed, errs.ErrPEFailed, "%s", reply.Err)
		}
		return nil, errs.New(op, me, errs.NoPE, errs.ErrInvalidArgument, "%s", reply.Err)
	}
	if len(reply.Payloads) != g.N {
		return nil, errs.New(op, me, errs.NoPE, errs.ErrInvalidArgument, "coordinator answered %d payloads, want %d", len(reply.Payloads), g.N)
	}
	return reply.Payloads, nil
}
