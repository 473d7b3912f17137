// Package actors holds what crosses between PEs' control planes: the
// versioned msgpack messages PEs exchange (Gather, GatherReply, PEFailed,
// GlobalExit) and the agreement coordinator, which gathers one contribution
// from every member of a group (the agreement behind collective
// allocation, team creation and finalize) as a pure state machine
// (Coordinator.Step). Its protoactor-go glue (the actor system, the
// coordinator's actor, RunGather) is here too; it reaches no world by
// itself: a live world's actor system and PIDs never leave internal
// packages. Nothing on the data path passes through here.
package actors

import (
	"context"
	"log/slog"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// NewSystem returns an actor system that logs through logger (protoactor's
// own INFO chatter included) instead of its default stderr logger. A nil
// logger discards everything.
func NewSystem(logger *slog.Logger) *actor.ActorSystem {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	quiet := slog.New(debugOnly{logger.Handler()}).With("component", "protoactor")
	return actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return quiet }),
		// A message to a stopped actor starts a goroutine that sleeps one
		// throttle interval (default 1 s) before it ends; a world that
		// finalizes must not leave it behind for that long.
		actor.WithDeadLetterThrottleInterval(time.Millisecond))
}

// debugOnly logs every record at Debug. protoactor reports at Error what
// goshmem handles itself (a peer that left, a retried connection), and
// goshmem logs what matters of it at the right level.
type debugOnly struct{ h slog.Handler }

func (d debugOnly) Enabled(ctx context.Context, _ slog.Level) bool {
	return d.h.Enabled(ctx, slog.LevelDebug)
}

func (d debugOnly) Handle(ctx context.Context, r slog.Record) error {
	r.Level = slog.LevelDebug
	return d.h.Handle(ctx, r)
}

func (d debugOnly) WithAttrs(as []slog.Attr) slog.Handler { return debugOnly{d.h.WithAttrs(as)} }
func (d debugOnly) WithGroup(n string) slog.Handler       { return debugOnly{d.h.WithGroup(n)} }

// Func adapts a function to actor.Actor.
type Func func(ctx actor.Context)

// Receive calls f.
func (f Func) Receive(ctx actor.Context) { f(ctx) }
