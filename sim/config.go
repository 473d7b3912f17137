package sim

import (
	"errors"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/internal/core"
	"github.com/goshmem/shmem/internal/errs"
)

type config struct {
	heapSize  int
	heapLimit int
	nodeOf    func(int) int
	logger    *slog.Logger
	timeout   time.Duration
	opTO      time.Duration
	grace     time.Duration
	net       netOptions // delivery, seed, faults, model: simulate.go
	metrics   bool       // WithMetrics
	// bad collects the options whose arguments are wrong in any world;
	// check adds those wrong for the world at hand.
	bad error
}

// newConfig applies opts over the defaults and checks the result against
// a world of npes PEs. Run, Measure and MeasureSteps all build their
// config here, so that an option means the same to each of them.
func newConfig(npes int, fn func(p *shmem.PE) error, opts []Option) (config, error) {
	c := config{heapSize: DefaultHeapSize, net: netFromEnv()}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if fn == nil {
		c.refuse("Run", "the PEs' function is nil")
	}
	return c, c.check(npes)
}

// refuse records that option opt got an invalid argument, which detail
// names; Run returns it before it builds a world.
func (c *config) refuse(opt, detail string, args ...any) {
	c.refuseErr(opt, errs.New("sim."+opt, errs.NoPE, errs.NoPE, errs.ErrInvalidArgument, detail, args...))
}

// refuseErr is refuse for a cause that already wraps ErrInvalidArgument.
func (c *config) refuseErr(opt string, err error) {
	c.bad = errors.Join(c.bad, errs.As("sim."+opt, errs.NoPE, err))
}

// deadlockGrace is the detector's grace for core.LocalConfig, where 0 is
// off: WithDeadlockGrace documents 0 as the default and negative as off.
func (c *config) deadlockGrace() time.Duration {
	switch {
	case c.grace < 0:
		return 0
	case c.grace == 0:
		return core.DefaultDeadlockGrace
	}
	return c.grace
}

// schedulerGrace is the grace of the simulated network's scheduler
// (simnet.Config.Grace), the same as the detector's: there a negative
// one is off.
func (c *config) schedulerGrace() time.Duration {
	if c.grace == 0 {
		return core.DefaultDeadlockGrace
	}
	return c.grace
}

// check returns the options' errors: those wrong in any world, and the
// PEs and nodes that a world of npes PEs does not have.
func (c *config) check(npes int) error {
	if npes >= 1 { // else the world itself is refused (core's Init error)
		c.checkRanks(npes)
	}
	return errors.Join(c.bad, c.net.envErr)
}

// checkRanks refuses the options that name a PE or a node a world of
// npes PEs does not have: a fault aimed at a PE that does not exist would
// inject nothing, and the test that asked for it would pass untested.
func (c *config) checkRanks(npes int) {
	in := func(pe int) bool { return pe >= 0 && pe < npes }
	for _, pe := range slices.Sorted(maps.Keys(c.net.fail)) {
		if !in(pe) {
			c.refuse("WithFailure", "PE %d is not in a world of %d PEs", pe, npes)
		}
	}
	for _, pe := range slices.Sorted(maps.Keys(c.net.slow)) {
		if !in(pe) {
			c.refuse("WithSlowPE", "PE %d is not in a world of %d PEs", pe, npes)
		}
	}
	for _, l := range c.net.down {
		if !in(l[0]) || !in(l[1]) || l[0] == l[1] {
			c.refuse("WithLinkDown", "no link between PE %d and PE %d in a world of %d PEs", l[0], l[1], npes)
		}
	}
	if c.nodeOf != nil {
		for r := range npes {
			if node := c.nodeOf(r); node < 0 {
				c.refuse("WithNodeOf", "node %d for PE %d: want a node number >= 0", node, r)
				break
			}
		}
	}
}
