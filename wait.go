package shmem

import (
	"math/bits"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
)

// loadLocal atomically reads the caller's element at byte offset off.
func loadLocal[T Integer](p *PE, off uint64) T {
	if elemSize[T]() == 4 {
		return fromBits[T](uint64(transport.Load32(p.c.Local(), off)))
	}
	return fromBits[T](transport.Load64(p.c.Local(), off))
}

// WaitUntil blocks until the caller's ivar element 0 compares true with v
// (shmem_wait_until). It returns early with an error when the world fails
// or ends, since the value may then never come.
func WaitUntil[T Integer](p *PE, ivar Sym[T], cmp Cmp, v T) error {
	const op = "WaitUntil"
	off, err := waitArgs(p, op, ivar, cmp, 1, nil)
	if err != nil {
		return err
	}
	return p.c.WaitWord(p.waitContext(), op, off, func() bool { return compare(loadLocal[T](p, off), cmp, v) })
}

// WaitCheck returns the error a wait of this PE on its own memory would
// end with now: a failed PE, a global exit, this PE's Finalize, or every
// other PE having called Finalize or failed (no one is left to write).
// It returns nil while such a wait may still be satisfied. The Wait calls
// check this themselves; WaitCheck is for code that waits by polling
// memory goshmem's writes do not announce, as the C API does for the
// plain stores of peers on its host, and must end its wait as they do.
func (p *PE) WaitCheck(op string) error {
	if p.zero() {
		return zeroPE(op)
	}
	return p.c.WaitCheck(op)
}

// Test reports whether the caller's ivar element 0 compares true with v
// (shmem_test); false for invalid arguments. It reports no error, so a
// loop of Tests whose writer failed spins on: call WaitCheck in such a
// loop now and then, or wait with WaitUntil, which ends with the failure.
// With network paths a tight loop of misses naps now and then on the PE's
// bell (at most 200 µs, ended by a write that lands), so that the
// goroutines reading the sockets get the core: a PE bound to one core
// would otherwise land the awaited write only every 10 ms or so.
func Test[T Integer](p *PE, ivar Sym[T], cmp Cmp, v T) bool {
	off, err := testArgs(p, "Test", ivar, cmp, 1, nil)
	return err == nil && tested(p, compare(loadLocal[T](p, off), cmp, v))
}

// tested returns a Test form's result after telling the PE of a miss
// (core.PE.Missed): a loop of misses naps now and then, so that the
// network readers that land the awaited write get the core.
func tested(p *PE, ok bool) bool {
	if !ok {
		p.c.Missed()
	}
	return ok
}

// testArgs is waitArgs for the Test forms, which programs call in a loop:
// under the simulator's scheduler each call is also a scheduling point
// (core.PE.Poll), so that a PE spinning on Test lets the others run and
// the writes it waits for land.
func testArgs[T Integer](p *PE, op string, ivars Sym[T], cmp Cmp, n int, status []bool) (uint64, error) {
	off, err := waitArgs(p, op, ivars, cmp, n, status)
	if err == nil {
		p.c.Poll()
	}
	return off, err
}

func waitArgs[T Integer](p *PE, op string, ivars Sym[T], cmp Cmp, n int, status []bool) (uint64, error) {
	if p.zero() {
		return 0, zeroPE(op)
	}
	if !cmp.valid() {
		return 0, errs.New(op, p.MyPE(), errs.NoPE, errs.ErrInvalidArgument, "comparison %d", cmp)
	}
	if status != nil && len(status) < ivars.n {
		return 0, errs.New(op, p.MyPE(), errs.NoPE, errs.ErrInvalidArgument, "status has %d entries for %d variables", len(status), ivars.n)
	}
	if err := p.c.Check(op); err != nil {
		return 0, err
	}
	return ivars.check(p, op, p.MyPE(), 0, n)
}

// satisfied appends to idx the indices of ivars that are not excluded by
// status and compare true, and reports how many are not excluded.
// With vals (the _vector forms) element i compares with vals[i].
func satisfied[T Integer](p *PE, off uint64, n int, status []bool, cmp Cmp, v T, vals []T, idx []int) ([]int, int) {
	live := 0
	for i := 0; i < n; i++ {
		in, holds := element(p, off, i, status, cmp, v, vals)
		if in {
			live++
		}
		if holds {
			idx = append(idx, i)
		}
	}
	return idx, live
}

// element reports whether element i of ivars is in the test set (not
// excluded by status) and whether it is and compares true, with v or,
// given vals, with vals[i].
func element[T Integer](p *PE, off uint64, i int, status []bool, cmp Cmp, v T, vals []T) (in, holds bool) {
	if status != nil && status[i] {
		return false, false
	}
	if vals != nil {
		v = vals[i]
	}
	return true, compare(loadLocal[T](p, off+uint64(i)*elemSize[T]()), cmp, v)
}

// anyStart returns the index at which a WaitUntilAny or TestAny call (or
// their _vector forms) on n elements starts its scan. The spec requires
// that a series of calls eventually return every element that satisfies
// the condition, so a scan cannot always start at 0: the starts follow a
// Weyl sequence (golden-ratio steps of one counter per handle), which
// spreads them over the array also when calls on several arrays
// interleave, and keeps a run repeatable without a random source.
func (p *PE) anyStart(n int) int {
	x := p.anyTurn.Add(0x9e3779b97f4a7c15)
	start, _ := bits.Mul64(x, uint64(n))
	return int(start)
}

// firstFrom returns the first index at or after start, wrapping around,
// of ivars that is not excluded by status and compares true, or -1, and
// how many are not excluded (all of them when it returns -1). With vals
// element i compares with vals[i].
func firstFrom[T Integer](p *PE, off uint64, n, start int, status []bool, cmp Cmp, v T, vals []T) (found, live int) {
	for k := 0; k < n; k++ {
		i := start + k
		if i >= n {
			i -= n
		}
		in, holds := element(p, off, i, status, cmp, v, vals)
		if in {
			live++
		}
		if holds {
			return i, live
		}
	}
	return -1, live
}

// WaitUntilAll blocks until every element of the caller's ivars not excluded
// by status (true = excluded; nil excludes none) compares true with v.
func WaitUntilAll[T Integer](p *PE, ivars Sym[T], status []bool, cmp Cmp, v T) error {
	return waitAll(p, "WaitUntilAll", ivars, status, cmp, v, nil)
}

// WaitUntilAny blocks until some element not excluded compares true and
// returns its index; -1 when every element is excluded or ivars is empty.
// When several compare true, which one it returns varies from call to
// call, so that a series of calls returns each of them (as the spec
// requires; a loop that serves the index returned cannot starve one).
func WaitUntilAny[T Integer](p *PE, ivars Sym[T], status []bool, cmp Cmp, v T) (int, error) {
	return waitAny(p, "WaitUntilAny", ivars, status, cmp, v, nil)
}

// WaitUntilSome blocks until at least one element not excluded compares true
// and returns the indices of all that do; empty when every element is
// excluded or ivars is empty.
func WaitUntilSome[T Integer](p *PE, ivars Sym[T], status []bool, cmp Cmp, v T) ([]int, error) {
	return waitSome(p, "WaitUntilSome", ivars, status, cmp, v, nil)
}

// TestAll reports whether every element not excluded compares true.
func TestAll[T Integer](p *PE, ivars Sym[T], status []bool, cmp Cmp, v T) bool {
	return testAll(p, "TestAll", ivars, status, cmp, v, nil)
}

// TestAny returns the index of an element not excluded that compares true.
// When several do, which one varies from call to call, as with
// WaitUntilAny.
func TestAny[T Integer](p *PE, ivars Sym[T], status []bool, cmp Cmp, v T) (int, bool) {
	return testAny(p, "TestAny", ivars, status, cmp, v, nil)
}

// TestSome returns the indices of the elements not excluded that compare true.
func TestSome[T Integer](p *PE, ivars Sym[T], status []bool, cmp Cmp, v T) []int {
	return testSome(p, "TestSome", ivars, status, cmp, v, nil)
}
