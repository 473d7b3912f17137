// Package sim runs a goshmem world inside one process: every PE is a
// goroutine, every heap a private mapping, every put a memory copy. It is
// the backend for developing and testing SPMD code without a launcher.
//
// Lazy delivery (WithDelivery) looks for missing Fences and Quiets, but a
// seed picks one schedule of landings, and a given bug shows in some
// schedules only: a put and a flag without a Fence between them fail in
// about one seed of four. A test of ordering therefore runs many seeds
// and names the one that failed, which WithSeed replays:
//
//	for seed := int64(0); seed < 64; seed++ {
//		err := sim.Run(2, body, sim.WithDelivery(sim.Lazy), sim.WithSeed(seed))
//		if err != nil {
//			t.Fatalf("seed %d: %v", seed, err)
//		}
//	}
//
// A cost model (WithModel) reorders nothing, so such a test runs without
// one.
package sim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/internal/core"
	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/internal/simnet"
)

// DefaultHeapSize is each simulated PE's heap unless WithHeapSize says
// otherwise: small enough for a thousand PEs in one process, since pages
// cost nothing until touched.
const DefaultHeapSize = 16 << 20

// Option configures Run.
type Option func(*config)

// WithHeapSize sets each PE's symmetric heap size in bytes.
func WithHeapSize(bytes int) Option { return func(c *config) { c.heapSize = bytes } }

// WithHeapLimit lets each PE's heap grow up to bytes when a collective
// allocation does not fit (see shmem.WithHeapLimit); WithHeapSize is then
// the initial size. Default: no growth.
func WithHeapLimit(bytes int) Option { return func(c *config) { c.heapLimit = bytes } }

// WithNodes groups PEs into nodes of perNode consecutive ranks. PEs on one
// node form TeamShared and reach each other with Ptr. Default: one node.
// A perNode below 1 makes Run fail with ErrInvalidArgument.
func WithNodes(perNode int) Option {
	return func(c *config) {
		if perNode < 1 {
			c.refuse("WithNodes", "%d PEs per node: want at least 1", perNode)
			return
		}
		c.nodeOf = func(r int) int { return r / perNode }
	}
}

// WithNodeOf assigns each rank to a node with f, a number >= 0; Run fails
// with ErrInvalidArgument when f gives any rank a negative one.
func WithNodeOf(f func(rank int) int) Option { return func(c *config) { c.nodeOf = f } }

// WithLogger sends the world's log to l. Default: discarded.
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// WithTimeout bounds each control-plane agreement (allocation, team
// creation). Default 10 minutes. A negative d makes Run fail with
// ErrInvalidArgument.
func WithTimeout(d time.Duration) Option {
	return func(c *config) {
		if d < 0 {
			c.refuse("WithTimeout", "%v: want a duration >= 0", d)
			return
		}
		c.timeout = d
	}
}

// WithOpTimeout makes every blocking call (waits, locks, barriers,
// collectives, allocation, Finalize) that takes longer than d fail with
// ErrTimeout, naming the call and the PEs it waits on (in a team
// operation or Finalize, the PEs not there yet). Default: no limit (the
// deadlock detector still ends a world where no PE can progress). A PE
// whose barrier or collective times out gives up the team, as with
// shmem.WithOpTimeout: the other members still in that operation, or
// reaching it or a later one, fail at once with ErrPEFailed naming it.
//
// 0 is that default; a negative d makes Run fail with ErrInvalidArgument,
// as shmem.WithOpTimeout makes Init fail: a test that asked for a bound
// must not run without one.
func WithOpTimeout(d time.Duration) Option {
	return func(c *config) {
		if d < 0 {
			c.refuse("WithOpTimeout", "%v: want 0 (no limit) or a positive duration", d)
			return
		}
		c.opTO = d
	}
}

// WithDeadlockGrace sets how long every live PE must stay blocked with
// nothing changing before Run declares a deadlock (ErrDeadlock), under
// every delivery mode: the simulated network's scheduler (a seed, Lazy
// delivery, a model) waits it too. Default (and d == 0) 500 ms; a
// negative d turns the detector off, the scheduler's included, and a
// world that deadlocks then never returns.
//
// Go cannot tell whether a goroutine running its own code (a computation,
// a sleep, a wait on a channel) will call goshmem again, so a PE whose
// other goroutines are all blocked counts as blocked while it does: a
// program whose goroutines stay away from goshmem calls for longer than
// 500 ms while everything else waits sets a longer grace. The grace runs
// from such a goroutine's last call under the simulated network; without
// it the detector sees only the calls that block, and runs it from the
// last of those.
func WithDeadlockGrace(d time.Duration) Option { return func(c *config) { c.grace = d } }

// Run runs fn on npes PEs, each in its own goroutine, and returns their
// errors joined (nil when every fn returned nil). A PE whose fn returns
// without calling Finalize is finalized for it; a PE whose fn fails or
// panics is reported failed to the others, so nobody waits for it forever.
// Worlds of separate Run calls are independent and may run at once.
//
// Run always ends (unless WithDeadlockGrace turns the detector off): when
// every PE that is still running is blocked inside goshmem and nothing can
// change for the grace period (WithDeadlockGrace),
// every blocked call fails with an error matching ErrDeadlock that lists
// what each PE is blocked in and on what, and Run returns them. After a
// GlobalExit, Run returns an error from which shmem.ExitStatus reads the
// status, whatever the PEs' functions returned after it.
//
// An option whose argument is wrong (a PE or node the world does not have,
// a factor or cost out of range) makes Run fail with an error matching
// ErrInvalidArgument that names the option, before any PE runs.
//
// A PE whose fn returns nil while its PE holds a lock (a SetLock or
// TestLock without its ClearLock) fails with ErrInvalidArgument naming
// the lock, in every schedule: no later SetLock could take it, and a run
// where no other PE wanted it after would otherwise pass.
//
// Run's error joins every PE's, those of PEs whose own calls failed first
// and those of PEs that failed because another did (ErrPEFailed) after,
// each in rank order.
func Run(npes int, fn func(p *shmem.PE) error, opts ...Option) error {
	c, err := newConfig(npes, fn, opts)
	if err != nil {
		return err
	}
	if c.net.on() {
		_, err := runNet(npes, fn, &c, nil)
		return err
	}
	w, err := core.NewLocalWorld(core.LocalConfig{NPEs: npes, HeapSize: c.heapSize, HeapLimit: c.heapLimit, NodeOf: c.nodeOf, Timeout: c.timeout, Logger: c.logger,
		OpTimeout: c.opTO, DeadlockGrace: c.deadlockGrace(), Metrics: c.metrics})
	if err != nil {
		return err
	}
	errs := make([]error, npes)
	var wg sync.WaitGroup
	for r, c := range w.PEs {
		p, err := publicPE(c)
		if err != nil {
			errs[r] = err
			w.Fail(r, err.Error())
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[r] = runPE(w, r, c, p, fn)
		}()
	}
	wg.Wait()
	return joinCausesFirst(append(errs, w.Close()))
}

// joinCausesFirst joins the PEs' errors with those that are not a
// consequence of another PE's failure (ErrPEFailed) first, each group in
// rank order: the first line of Run's error is then the mistake to read,
// not a bystander's report of it.
func joinCausesFirst(errs []error) error {
	ordered := make([]error, 0, len(errs))
	for _, consequence := range []bool{false, true} {
		for _, err := range errs {
			if err != nil && errors.Is(err, shmem.ErrPEFailed) == consequence {
				ordered = append(ordered, err)
			}
		}
	}
	return errors.Join(ordered...)
}

// publicPE hands the runtime's PE c to user code as a *shmem.PE.
func publicPE(c *core.PE) (*shmem.PE, error) {
	// It cannot fail: the backend hands over a PE that exists.
	return shmem.Init(context.Background(), shmem.WithBackend(func(context.Context) (*core.PE, error) { return c, nil }))
}

// runPE runs fn on PE rank and finalizes it, or reports it failed to the
// world, and returns its error labelled "PE rank: " as Run joins them. A
// simulated network ends a PE it kills (or one in a deadlock it reports)
// by panicking with *simnet.Abort inside a goshmem call.
func runPE(w *core.LocalWorld, rank int, c *core.PE, p *shmem.PE, fn func(p *shmem.PE) error) (err error) {
	defer func() {
		reason, aborted := "", false
		if v := recover(); v != nil {
			if a, ok := v.(*simnet.Abort); ok {
				reason, aborted = a.Reason, true
				err = fmt.Errorf("%s: %w", a.Reason, errs.ErrPEFailed)
			} else {
				// The stack goes into this PE's own error; the survivors
				// get one line of reason.
				reason = fmt.Sprintf("panicked: %v", v)
				err = fmt.Errorf("%s\n%s", reason, debug.Stack())
			}
		}
		exit := c.Exited()
		switch {
		case err != nil && (exit == nil || aborted):
			if reason == "" {
				reason = fmt.Sprintf("returned an error: PE %d: %s", rank, oneLine(err.Error()))
			}
			w.Fail(rank, reason)
		case err != nil:
			// A GlobalExit ended the world before fn failed. The peers
			// hear of the exit alone: a failure notice would race it and,
			// first to arrive, hide the status from them; this PE's error
			// carries the status and what fn did after.
			if _, ok := core.ExitStatus(err); !ok {
				err = fmt.Errorf("%w; after it: %w", exit, err)
			}
			if _, a := finalize(p); a != nil {
				w.Fail(rank, a.Reason)
			} else {
				w.Done(rank)
			}
		default:
			// A Finalize fn made itself was fn's to report: a later one
			// returns the same result (an error fn chose to swallow, its
			// return of nil says so), which Run does not take back.
			finished := c.Finished()
			ferr, a := finalize(p)
			switch {
			case a != nil:
				// The simulated network ended the PE inside the Finalize
				// run for it: reported as any death is.
				err = fmt.Errorf("%s: %w", a.Reason, errs.ErrPEFailed)
				w.Fail(rank, a.Reason)
			case ferr != nil && !finished:
				err = ferr
				w.Done(rank)
			default:
				err = exit // fn may have swallowed the exit; Run reports it every time
				w.Done(rank)
			}
		}
		if err != nil {
			err = fmt.Errorf("PE %d: %w", rank, err)
		}
	}()
	if err = fn(p); err == nil && c.Exited() == nil {
		err = leftLocked(c, rank)
	}
	return err
}

// finalize finalizes p for a function that returned without doing so. A
// simulated network may end the PE inside it (a WithFailure count that
// falls in Finalize's own calls): its Abort comes back as a, not as a
// panic out of runPE's deferred function, which nothing would recover.
func finalize(p *shmem.PE) (err error, a *simnet.Abort) {
	defer func() {
		if v := recover(); v != nil {
			ab, ok := v.(*simnet.Abort)
			if !ok {
				panic(v)
			}
			a = ab
		}
	}()
	return p.Finalize(), nil
}

// oneLine keeps the first line of s.
func oneLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}
