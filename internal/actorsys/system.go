// Package actorsys is goshmem's protoactor-go glue: the actor system a
// PE's control plane runs in, the actor that feeds the agreement
// coordinator (actors.Coordinator) its messages, and the calls that take
// part in an agreement (RunGather, StartGather). The messages and the
// coordinator's rules are package actors'; this package only delivers
// messages to them and their replies back. It is internal so that no
// importer of goshmem reaches a world's actor plumbing.
package actorsys

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
