package sim

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/internal/core"
	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/internal/simnet"
)

// Delivery says when the simulator lands puts, non-fetching atomics,
// signals and NBI gets.
type Delivery uint8

const (
	// Eager lands every operation when it is issued, as shared memory
	// does. It is the default.
	Eager Delivery = iota
	// Lazy holds them in flight and lands each at a moment the OpenSHMEM
	// 1.5 memory model allows, chosen by the seeded scheduler: writes to
	// one PE land in any order unless a Fence separates them; Quiet,
	// barriers and the completion rules of each call force them (a Quiet
	// lets the other PEs run while its writes come due, so a Fence used
	// to order writes to different PEs, where a Quiet is needed, fails
	// too); each context (CreateCtx) is ordered and completed by its own
	// Fence and Quiet only; a put-with-signal's data lands with or before
	// its signal; a GetNBI's buffer is written only by Quiet; a blocking Get or fetching atomic
	// may or may not see the caller's own earlier writes to that PE (the
	// spec orders neither after them without a Quiet). A program that
	// forgets a Fence or Quiet fails here as it would over TCP or RDMA,
	// in the seeds whose schedule lands its writes out of order, not in
	// every one: a test runs many seeds (see the package doc). Under
	// WithModel writes land in the order each PE issued them, at their
	// modeled arrival, so Lazy reorders nothing there.
	Lazy
)

// netOptions is what the options of this file set; any of them puts the
// world under the simulated network.
type netOptions struct {
	delivery Delivery
	seed     uint64
	seeded   bool
	fail     map[int]int
	slow     map[int]float64
	down     [][2]int
	model    *simnet.Model
	trace    io.Writer
	envErr   error
}

func (o *netOptions) on() bool {
	return o.delivery != Eager || o.seeded || len(o.fail) > 0 || len(o.slow) > 0 ||
		len(o.down) > 0 || o.model != nil || o.trace != nil || o.envErr != nil
}

// netFromEnv reads SHMEM_SIM_DELIVERY (eager or lazy) and SHMEM_SIM_SEED,
// which apply to every Run of the process unless its options say
// otherwise: how CI runs a package's simulator tests in Lazy mode.
func netFromEnv() netOptions {
	var o netOptions
	switch v := strings.ToLower(os.Getenv("SHMEM_SIM_DELIVERY")); v {
	case "", "eager":
	case "lazy":
		o.delivery = Lazy
	default:
		o.envErr = fmt.Errorf("SHMEM_SIM_DELIVERY=%q: want eager or lazy: %w", v, errs.ErrInvalidArgument)
	}
	if v := os.Getenv("SHMEM_SIM_SEED"); v != "" {
		s, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			o.envErr = fmt.Errorf("SHMEM_SIM_SEED=%q: want an integer: %w", v, errs.ErrInvalidArgument)
		}
		o.seed, o.seeded = uint64(s), true
	}
	return o
}

// WithDelivery sets when operations land: Eager (default) or Lazy. Any
// other value makes Run fail with ErrInvalidArgument.
func WithDelivery(d Delivery) Option {
	return func(c *config) {
		if d != Eager && d != Lazy {
			c.refuse("WithDelivery", "unknown delivery %d: want sim.Eager or sim.Lazy", d)
			return
		}
		c.net.delivery = d
	}
}

// WithSeed fixes every choice of the scheduler and the fault injector: the
// PEs run one at a time, switching only inside goshmem calls, in the order
// the seed picks, so the same seed gives the same interleaving, the same
// landings and the same outcome. Without it a run under the simulated
// network draws a seed and names it in its error. What breaks replay: a
// PE that calls goshmem from goroutines of its own (they share its turn,
// in an order real time picks), and code that looks at real time. Such a
// PE's goroutines are still scheduled, each blocked call tracked on its
// own, so several may block at once; but one that runs its own code for
// longer than the deadlock grace (WithDeadlockGrace) after its last call,
// while every other goroutine of every PE is blocked, is reported as a
// deadlock (README).
func WithSeed(seed int64) Option {
	return func(c *config) { c.net.seed, c.net.seeded = uint64(seed), true }
}

// WithFailure makes PE pe die after its afterOps-th goshmem call (calls on
// its data paths: puts, gets, atomics, Fence, Quiet, and those that
// collectives make): its next call does not return, its writes in flight
// are lost, and the other PEs see ErrPEFailed as from a failure detector.
// A PE that makes afterOps calls or fewer, Finalize's own included, is
// not killed, and the run goes as without the option: a sweep over
// afterOps from 0 kills the PE at every point of its program until the
// first count at which Run succeeds. A pe outside the world or a negative
// afterOps makes Run fail with ErrInvalidArgument.
func WithFailure(pe, afterOps int) Option {
	return func(c *config) {
		if afterOps < 0 {
			c.refuse("WithFailure", "PE %d after %d calls: want a count >= 0", pe, afterOps)
			return
		}
		if c.net.fail == nil {
			c.net.fail = map[int]int{}
		}
		c.net.fail[pe] = afterOps
	}
}

// WithSlowPE makes PE pe factor times slower: with a model its overheads,
// gaps and wake-ups cost factor times more; without one the scheduler
// runs it factor times less often. A pe outside the world or a factor
// that is not a finite number >= 1 makes Run fail with
// ErrInvalidArgument.
func WithSlowPE(pe int, factor float64) Option {
	return func(c *config) {
		if !(factor >= 1) || math.IsInf(factor, 1) {
			c.refuse("WithSlowPE", "PE %d factor %v: want a finite factor >= 1", pe, factor)
			return
		}
		if c.net.slow == nil {
			c.net.slow = map[int]float64{}
		}
		c.net.slow[pe] = factor
	}
}

// WithLinkDown loses the link between PEs a and b. Their traffic is
// relayed through a third PE, as the process backends do, so programs
// still succeed; with a model each message pays a second hop. Two PEs
// that are not distinct PEs of the world make Run fail with
// ErrInvalidArgument.
func WithLinkDown(a, b int) Option {
	return func(c *config) { c.net.down = append(c.net.down, [2]int{a, b}) }
}

// WithTrace writes one line per scheduling decision and landing to w: two
// runs with the same seed write the same trace.
func WithTrace(w io.Writer) Option { return func(c *config) { c.net.trace = w } }

// runNet runs the world under the simulated network.
// marker, if set, receives the function that records a PE's clock.
func runNet(npes int, fn func(p *shmem.PE) error, c *config, marker func(func(rank int))) (simnet.Result, error) {
	seed := c.net.seed
	if !c.net.seeded {
		var b [8]byte
		_, _ = rand.Read(b[:])
		seed = binary.LittleEndian.Uint64(b[:]) >> 1
	}
	var w *core.LocalWorld
	mode := simnet.Eager
	if c.net.delivery == Lazy {
		mode = simnet.Lazy
	}
	net := simnet.New(simnet.Config{
		NPEs: npes, Mode: mode, Seed: seed, FailAfter: c.net.fail, Slow: c.net.slow, Down: c.net.down,
		Model: c.net.model, NodeOf: c.nodeOf, Trace: c.net.trace,
		Kill:     func(rank int, reason string) { w.Fail(rank, reason) },
		Deadlock: func(ended func(int) bool) { w.Deadlock(ended) },
		Grace:    c.schedulerGrace(),
		Control:  func() uint64 { return w.Moves() },
	})
	if marker != nil {
		marker(net.Mark)
	}
	w, err := core.NewLocalWorld(core.LocalConfig{NPEs: npes, HeapSize: c.heapSize, HeapLimit: c.heapLimit, NodeOf: c.nodeOf, Timeout: c.timeout, Logger: c.logger, Net: net, OpTimeout: c.opTO, Metrics: c.metrics,
		// The scheduler finds a world where every PE waits; the real-time
		// detector also finds one where a PE polls through the schedule for
		// what never comes (a lock's waiter: every live PE blocked, nothing
		// changing for the grace).
		DeadlockGrace: c.deadlockGrace()})
	if err != nil {
		return simnet.Result{}, err
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
			net.Start(r)
			errs[r] = runPE(w, r, c, p, func(p *shmem.PE) error {
				err := fn(p)
				net.Returned(r)
				return err
			})
			net.Exit(r)
		}()
	}
	wg.Wait()
	err = joinCausesFirst(append(errs, w.Close()))
	if err != nil {
		s := int64(seed)
		err = fmt.Errorf("%w\nsimulation seed %d: rerun with sim.WithSeed(%d) or SHMEM_SIM_SEED=%d", err, s, s, s)
	}
	return net.Result(), err
}
