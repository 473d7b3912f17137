package actors

import (
	"log/slog"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/goshmem/shmem/internal/errs"
)

// Wrap encodes m into the envelope inter-PE messages travel in while
// protoactor's remote layer carries them: it only carries protobuf
// messages, so the msgpack bytes ride in a BytesValue. Actors accept the
// decoded messages as well (Unwrap), which is what a control lane that
// delivers Go values needs.
func Wrap(m any) (*wrapperspb.BytesValue, error) {
	b, err := Encode(m)
	if err != nil {
		return nil, err
	}
	return wrapperspb.Bytes(b), nil
}

// Unwrap returns the control message an actor received: the decoded
// message itself, or the one a Wrap envelope carries. It returns nil for
// anything else (protoactor's own system messages) and for an envelope
// that does not decode, which it logs.
func Unwrap(msg any, log *slog.Logger) any {
	switch m := msg.(type) {
	case *Gather, *GatherReply, *PEFailed, *GlobalExit:
		return m
	case *wrapperspb.BytesValue:
		d, err := Decode(m.Value)
		if err != nil {
			log.Warn("actor dropped a control message", "err", err)
			return nil
		}
		return d
	}
	return nil
}

// NewCoordinator returns the props of the actor that runs a Coordinator:
// it feeds each Gather (with its sender) and PEFailed to Step and sends
// the replies, in the envelope the remote layer needs.
func NewCoordinator(log *slog.Logger) *actor.Props {
	return actor.PropsFromProducer(func() actor.Actor {
		var c Coordinator
		return Func(func(ctx actor.Context) {
			m := Unwrap(ctx.Message(), log)
			if m == nil {
				return
			}
			var from any
			if s := ctx.Sender(); s != nil {
				from = s
			}
			for _, r := range c.Step(from, m) {
				env, err := Wrap(r.Msg)
				if err != nil {
					env, _ = Wrap(&GatherReply{Err: err.Error(), Failed: -1})
				}
				ctx.Send(r.To.(*actor.PID), env)
			}
		})
	})
}

// RunGather contributes g to its round at the coordinator and returns every
// member's payload. op and me name the caller in errors.
func RunGather(root *actor.RootContext, coord *actor.PID, g *Gather, timeout time.Duration, op string, me int) ([][]byte, error) {
	env, err := Wrap(g)
	if err != nil {
		return nil, err
	}
	res, err := root.RequestFuture(coord, env, timeout).Result()
	if err != nil {
		return nil, errs.New(op, me, errs.NoPE, errs.ErrTimeout, "no agreement from the coordinator within %v (%v)", timeout, err)
	}
	reply, ok := Unwrap(res, slogDiscard).(*GatherReply)
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
func StartGather(root *actor.RootContext, coord *actor.PID, g *Gather, arrived func()) (answer <-chan *GatherReply, stop func(), err error) {
	env, err := Wrap(g)
	if err != nil {
		return nil, nil, err
	}
	ch := make(chan *GatherReply, 1)
	pid := root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message().(type) {
		case *actor.Started, *actor.Stopping, *actor.Stopped, *actor.Restarting:
			return
		}
		if arrived != nil {
			arrived()
		}
		if r, ok := Unwrap(c.Message(), slogDiscard).(*GatherReply); ok {
			select {
			case ch <- r:
			default:
			}
		}
	}))
	root.RequestWithCustomSender(coord, env, pid)
	return ch, func() { _ = root.StopFuture(pid).Wait() }, nil
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

var slogDiscard = slog.New(slog.DiscardHandler)
