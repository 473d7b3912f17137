package core

import (
	"context"
	"log/slog"
	"sync/atomic"
)

// Pcontrol sets the PE's profiling level (shmem_pcontrol): 0 stops the
// PE's log below errors and the metrics' counting, 1 (the start) is the
// log as configured with counting and sampled timing, and 2 and above
// time every metered operation (meter.go's count reads it as a mask).
func (p *PE) Pcontrol(level int) {
	p.s.pctl.Store(int32(max(level, 0)))
	if p.s.meter != nil {
		p.s.meter.setLevel(level)
	}
}

// PcontrolLevel returns the level Pcontrol last set; 1 before any call.
func (p *PE) PcontrolLevel() int { return int(p.s.pctl.Load()) }

// gate is the PE's log handler: Pcontrol(0) mutes records below errors.
// The level is read on every record, so a change applies at once, to the
// loggers derived with With as well.
type gate struct {
	h     slog.Handler
	level *atomic.Int32
}

func (g gate) Enabled(ctx context.Context, l slog.Level) bool {
	return (l >= slog.LevelError || g.level.Load() != 0) && g.h.Enabled(ctx, l)
}

func (g gate) Handle(ctx context.Context, r slog.Record) error { return g.h.Handle(ctx, r) }

func (g gate) WithAttrs(as []slog.Attr) slog.Handler { return gate{g.h.WithAttrs(as), g.level} }

func (g gate) WithGroup(name string) slog.Handler { return gate{g.h.WithGroup(name), g.level} }
