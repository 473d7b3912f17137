// Package actors is goshmem's control plane on protoactor-go: the actor
// system a world runs on, the versioned msgpack messages PEs exchange, and
// the coordinator actor that gathers one contribution from every member of a
// group (the agreement behind collective allocation, team creation and
// finalize). Nothing on the data path passes through here.
package actors

import (
	"log/slog"

	"github.com/asynkron/protoactor-go/actor"
)

// NewSystem returns an actor system that logs through logger (protoactor's
// own INFO chatter included) instead of its default stderr logger. A nil
// logger discards everything.
func NewSystem(logger *slog.Logger) *actor.ActorSystem {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return logger.With("component", "protoactor")
	}))
}

// Func adapts a function to actor.Actor.
type Func func(ctx actor.Context)

// Receive calls f.
func (f Func) Receive(ctx actor.Context) { f(ctx) }
