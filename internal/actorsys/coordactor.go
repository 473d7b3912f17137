package actorsys

import (
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/goshmem/shmem/actors"
	"github.com/goshmem/shmem/internal/errs"
)

// control returns m if it is one of the control messages an actor takes
// (delivered as decoded values: from another process through the world's
// control lane, which decoded and checked them), else nil (protoactor's
// own system messages).
func control(m any) any {
	switch m.(type) {
	case *actors.Gather, *actors.GatherReply, *actors.PEFailed, *actors.GlobalExit:
		return m
	}
	return nil
}

// NewCoordinator returns the props of the actor that runs an
// actors.Coordinator: it feeds each Gather (with its sender) and PEFailed
// to Step and sends the replies. npes returns the world's size, 0 while it
// is not known (a process spawns its coordinator before its world is
// agreed); the coordinator refuses rounds until it is, and rounds whose
// groups do not fit it.
func NewCoordinator(npes func() int) *actor.Props {
	return actor.PropsFromProducer(func() actor.Actor {
		var c actors.Coordinator
		return Func(func(ctx actor.Context) {
			m := control(ctx.Message())
			if m == nil {
				return
			}
			if c.NPEs == 0 {
				c.NPEs = npes()
			}
			var from any
			if s := ctx.Sender(); s != nil {
				from = s
			}
			for _, r := range c.Step(from, m) {
				ctx.Send(r.To.(*actor.PID), r.Msg)
			}
		})
	})
}

// RunGather contributes g to its round at the coordinator and returns every
// member's payload. op and me name the caller in errors.
func RunGather(root *actor.RootContext, coord *actor.PID, g *actors.Gather, timeout time.Duration, op string, me int) ([][]byte, error) {
	res, err := root.RequestFuture(coord, g, timeout).Result()
	if err != nil {
		return nil, errs.New(op, me, errs.NoPE, errs.ErrTimeout, "no agreement from the coordinator within %v (%v)", timeout, err)
	}
	reply, ok := res.(*actors.GatherReply)
	if !ok {
		return nil, errs.New(op, me, errs.NoPE, errs.ErrInvalidArgument, "coordinator answered %T", res)
	}
	return Result(reply, g.N, op, me)
}

// StartGather sends g to the coordinator without waiting: the answer
// arrives on the returned channel. The caller calls stop when it no longer
// waits, answered or not; an answer after stop is dropped. Unlike a
// future, which cannot be abandoned safely (a late reply races with its
// reader), the receiver is an actor of its own that stop ends. arrived,
// if set, runs when a message reaches the receiver, before it is decoded
// (the simulator's deadlock detector counts it as progress).
func StartGather(root *actor.RootContext, coord *actor.PID, g *actors.Gather, arrived func()) (answer <-chan *actors.GatherReply, stop func(), err error) {
	ch := make(chan *actors.GatherReply, 1)
	pid := root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message().(type) {
		case *actor.Started, *actor.Stopping, *actor.Stopped, *actor.Restarting:
			return
		}
		if arrived != nil {
			arrived()
		}
		if r, ok := c.Message().(*actors.GatherReply); ok {
			select {
			case ch <- r:
			default:
			}
		}
	}))
	root.RequestWithCustomSender(coord, g, pid)
	return ch, func() { _ = root.StopFuture(pid).Wait() }, nil
}

// Result turns the coordinator's reply to a round of n members into the
// payloads, or into the error every member of an aborted round returns:
// ErrPEFailed naming the failed PE, else ErrInvalidArgument.
func Result(reply *actors.GatherReply, n int, op string, me int) ([][]byte, error) {
	if reply.Err != "" {
		if reply.Failed >= 0 {
			// The reply states the sentinel the error will carry: once is
			// enough ("PE failed: lost the control link ...: PE failed").
			why := strings.TrimPrefix(reply.Err, errs.ErrPEFailed.Error()+": ")
			return nil, errs.New(op, me, reply.Failed, errs.ErrPEFailed, "%s", why)
		}
		return nil, errs.New(op, me, errs.NoPE, errs.ErrInvalidArgument, "%s", reply.Err)
	}
	if len(reply.Payloads) != n {
		return nil, errs.New(op, me, errs.NoPE, errs.ErrInvalidArgument, "coordinator answered %d payloads, want %d", len(reply.Payloads), n)
	}
	return reply.Payloads, nil
}
