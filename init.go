package shmem

import (
	"context"
	"log/slog"

	"github.com/goshmem/shmem/pe"
)

// DefaultHeapSize is each PE's symmetric heap when neither WithHeapSize nor
// SHMEM_SYMMETRIC_SIZE says otherwise. The heap is mapped lazily, so an
// unused heap costs address space, not memory.
const DefaultHeapSize = 64 << 20

// Option configures Init.
type Option func(*options)

type options struct {
	heapSize int64
	logger   *slog.Logger
}

// WithHeapSize sets the symmetric heap size in bytes (SHMEM_SYMMETRIC_SIZE).
func WithHeapSize(bytes int64) Option { return func(o *options) { o.heapSize = bytes } }

// WithLogger sends the library's log to l instead of the one the
// SHMEM_LOG_* variables describe.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// Init joins the world that the options or the environment describe and
// returns this process's PE (shmem_init). With neither, the world is this
// one PE.
func Init(ctx context.Context, opts ...Option) (*PE, error) {
	o := options{heapSize: DefaultHeapSize}
	for _, f := range opts {
		f(&o)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w, err := pe.NewLocalWorld(pe.LocalConfig{NPEs: 1, HeapSize: int(o.heapSize), Logger: o.logger, CloseWithLastPE: true})
	if err != nil {
		return nil, err
	}
	return w.PEs[0], nil
}
