package shmem

import (
	"context"

	"github.com/goshmem/shmem/internal/errs"
)

// ThreadLevel is a thread-safety level of OpenSHMEM (SHMEM_THREAD_*).
type ThreadLevel int

// The levels, weakest first.
const (
	ThreadSingle     ThreadLevel = iota // one goroutine makes every goshmem call
	ThreadFunneled                      // only the goroutine that called Init makes them
	ThreadSerialized                    // any goroutine, never two at once
	ThreadMultiple                      // any goroutines, at once
)

// InitThread is Init with a requested thread level (shmem_init_thread). It
// returns the level provided, which is always ThreadMultiple: every call
// of a PE and of its contexts is safe from many goroutines at once (Go
// moves goroutines between threads, so nothing in goshmem depends on which
// thread calls). What stays the caller's to order is what the spec orders
// at every level: collective calls (allocation, barriers, team splits,
// collectives, Finalize) in the same order on every PE, and one collective
// of a team at a time. A level outside ThreadSingle..ThreadMultiple is
// ErrInvalidArgument, before any start-up.
func InitThread(ctx context.Context, requested ThreadLevel, opts ...Option) (*PE, ThreadLevel, error) {
	if requested < ThreadSingle || requested > ThreadMultiple {
		return nil, 0, errs.New("InitThread", errs.NoPE, errs.NoPE, errs.ErrInvalidArgument, "thread level %d", requested)
	}
	p, err := Init(ctx, opts...)
	if err != nil {
		return nil, 0, err
	}
	return p, ThreadMultiple, nil
}

// QueryThread returns the thread level the PE provides
// (shmem_query_thread): ThreadMultiple, however it was initialized.
func (p *PE) QueryThread() ThreadLevel { return ThreadMultiple }

// Pcontrol sets the PE's profiling level (shmem_pcontrol). It drives the
// PE's log and, on a PE started WithMetrics, its metrics:
//
//   - 0 keeps only errors in the log and stops the metrics' counting (the
//     counts so far stay and are still reported);
//   - 1, the level at Init, logs as configured (WithLogger,
//     SHMEM_LOG_LEVEL), counts every operation and its bytes and times 1
//     in MetricsSampleEvery;
//   - 2 and above log as 1 and time every operation: detailed profiling,
//     at two clock reads per operation (more than an 8-byte put on shared
//     memory costs).
//
// A negative level is 0. It applies to the PE and its contexts at once;
// PcontrolLevel reads it back. On the zero PE it does nothing.
func (p *PE) Pcontrol(level int) {
	if !p.zero() {
		p.c.Pcontrol(level)
	}
}

// PcontrolLevel returns the level Pcontrol last set, 1 before any call.
func (p *PE) PcontrolLevel() int {
	if p.zero() {
		return 0
	}
	return p.c.PcontrolLevel()
}
