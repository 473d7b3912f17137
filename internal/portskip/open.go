package portskip

import (
	"slices"

	"github.com/goshmem/shmem/internal/errs"
)

// Open calls open, which binds something to a port the kernel chooses
// and returns it with that port, until the port is not in skip, and
// returns that one. A skipped one is held open while the kernel is asked
// again, so the kernel cannot hand its port back; release closes the held
// ones before Open returns. Each held one takes a distinct port of skip,
// so len(skip)+1 tries end with a port not in skip unless open keeps
// returning the same port (SO_REUSEPORT, a test's fake); that fails with
// errs.ErrBootstrap naming op, pe and what. An error of open is returned
// as it is: open names its own step. A port of 0 (open cannot tell) is
// taken.
func Open[T any](op string, pe int, what string, skip []int, open func() (T, int, error), release func(T)) (T, error) {
	var held []T
	defer func() {
		for _, h := range held {
			release(h)
		}
	}()
	var zero T
	for range len(skip) + 1 {
		v, port, err := open()
		if err != nil {
			return zero, err
		}
		if port == 0 || !slices.Contains(skip, port) {
			return v, nil
		}
		held = append(held, v)
	}
	return zero, errs.New(op, pe, errs.NoPE, errs.ErrBootstrap,
		"%s: the kernel kept choosing ports to skip (%v, which the job binds later)", what, skip)
}
