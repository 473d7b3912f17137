package actors

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/goshmem/shmem/internal/errs"
)

// control returns m if it is one of the control messages an actor takes
// (delivered as decoded values: from another process through the world's
// control lane, which decoded and checked them), else nil (protoactor's
// own system messages).
func control(m any) any {
	switch m.(type) {
	case *Gather, *GatherReply, *PEFailed, *GlobalExit:
		return m
	}
	return nil
}

// NewCoordinator returns the props of the actor that runs a Coordinator:
// it feeds each Gather (with its sender) and PEFailed to Step and sends
// the replies.
func NewCoordinator() *actor.Props {
	return actor.PropsFromProducer(func() actor.Actor {
		var c Coordinator
		return Func(func(ctx actor.Context) {
			m := control(ctx.Message())
			if m == nil {
				return
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
func RunGather(root *actor.RootContext, coord *actor.PID, g *Gather, timeout time.Duration, op string, me int) ([][]byte, error) {
	return AwaitGather(StartGather(root, coord, g, timeout), g, timeout, op, me)
}

// StartGather sends g to the coordinator and returns the future its reply
// completes. A *GatherReply sent to the future's PID by anyone else
// completes it too: that is how a PE ends a wait on a coordinator it knows
// to be dead (see internal/core's Agree).
func StartGather(root *actor.RootContext, coord *actor.PID, g *Gather, timeout time.Duration) *actor.Future {
	return root.RequestFuture(coord, g, timeout)
}

// AwaitGather waits for the reply to StartGather(…, g, timeout).
func AwaitGather(f *actor.Future, g *Gather, timeout time.Duration, op string, me int) ([][]byte, error) {
	res, err := f.Result()
	if err != nil {
		return nil, errs.New(op, me, errs.NoPE, errs.ErrTimeout, "no agreement from the coordinator within %v (%v)", timeout, err)
	}
	reply, ok := res.(*GatherReply)
	if !ok {
		return nil, errs.New(op, me, errs.NoPE, errs.ErrInvalidArgument, "coordinator answered %T", res)
	}
	return Result(reply, g.N, op, me)
}

// Result turns the coordinator's reply to a round of n members into the
// payloads, or into the error every member of an aborted round returns:
// ErrPEFailed naming the failed PE, else ErrInvalidArgument.
func Result(reply *GatherReply, n int, op string, me int) ([][]byte, error) {
	if reply.Err != "" {
		if reply.Failed >= 0 {
			return nil, errs.New(op, me, reply.Failed, errs.ErrPEFailed, "%s", reply.Err)
		}
		return nil, errs.New(op, me, errs.NoPE, errs.ErrInvalidArgument, "%s", reply.Err)
	}
	if len(reply.Payloads) != n {
		return nil, errs.New(op, me, errs.NoPE, errs.ErrInvalidArgument, "coordinator answered %d payloads, want %d", len(reply.Payloads), n)
	}
	return reply.Payloads, nil
}
