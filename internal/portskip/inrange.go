package portskip

import (
	"errors"
	"math/rand/v2"
	"slices"
	"syscall"

	"github.com/goshmem/shmem/internal/errs"
)

// InRange calls open on the ports lo..hi other than those in skip, each
// at most once, from a random start and on in turn, wrapping around (so
// that the PEs of one host do not all race for the first one), and
// returns what the first that succeeds opened. An error that matches
// syscall.EADDRINUSE (errors.Is) moves on to the next port; any other is
// returned as it is: open names its own step. When every port is taken
// it fails with errs.ErrBootstrap naming op, pe, rng (e.g.
// "SHMEM_PORT_RANGE=40000-40099") and where (e.g. "on 10.0.0.5"), and
// the last error. Package bootstrap's range listeners and the world's
// fabric node share it, so both pick their ports the same way.
func InRange[T any](op string, pe int, rng, where string, lo, hi int, skip []int, open func(port int) (T, error)) (T, error) {
	var zero T
	var last error
	n := hi - lo + 1
	start := rand.IntN(n)
	for i := range n {
		port := lo + (start+i)%n
		if slices.Contains(skip, port) {
			continue
		}
		v, err := open(port)
		if err == nil {
			return v, nil
		}
		if !errors.Is(err, syscall.EADDRINUSE) {
			return zero, err
		}
		last = err
	}
	// Each PE listens twice (control and data), and rank 0 once more (the
	// rendezvous) or, in a gossip world, each PE (its gossip port), so a
	// range narrower than that fails here whatever else the host runs.
	const need = "each PE of a host needs 2 ports of it, 3 in a gossip world, rank 0 one more with a unique ID"
	if last == nil {
		return zero, errs.New(op, pe, errs.NoPE, errs.ErrBootstrap,
			"every port of %s is already used by this PE's other listeners %s: widen the range (%s)", rng, where, need)
	}
	return zero, errs.New(op, pe, errs.NoPE, errs.ErrBootstrap,
		"every port of %s is taken %s (last: %v): widen the range (%s)", rng, where, last, need)
}
