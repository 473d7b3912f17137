package shmem

import "github.com/goshmem/shmem/internal/errs"

// The _vector forms of the multi-variable waits compare element i of the
// caller's ivars with vals[i] (shmem_wait_until_all_vector and friends);
// vals must have at least ivars.Len() entries, else ErrInvalidArgument.
// Otherwise they behave as the forms with one value.

// WaitUntilAllVector blocks until every element not excluded by status
// compares true with its value in vals.
func WaitUntilAllVector[T Integer](p *PE, ivars Sym[T], status []bool, cmp Cmp, vals []T) error {
	const op = "WaitUntilAllVector"
	if err := vecArgs(p, op, ivars, vals); err != nil {
		return err
	}
	return waitAll(p, op, ivars, status, cmp, 0, vals)
}

// WaitUntilAnyVector blocks until some element not excluded compares true
// with its value and returns its index; -1 when every element is excluded
// or ivars is empty. Which of several it returns varies, as with
// WaitUntilAny.
func WaitUntilAnyVector[T Integer](p *PE, ivars Sym[T], status []bool, cmp Cmp, vals []T) (int, error) {
	const op = "WaitUntilAnyVector"
	if err := vecArgs(p, op, ivars, vals); err != nil {
		return -1, err
	}
	return waitAny(p, op, ivars, status, cmp, 0, vals)
}

// WaitUntilSomeVector blocks until at least one element not excluded
// compares true with its value and returns the indices of all that do.
func WaitUntilSomeVector[T Integer](p *PE, ivars Sym[T], status []bool, cmp Cmp, vals []T) ([]int, error) {
	const op = "WaitUntilSomeVector"
	if err := vecArgs(p, op, ivars, vals); err != nil {
		return nil, err
	}
	return waitSome(p, op, ivars, status, cmp, 0, vals)
}

// TestAllVector reports whether every element not excluded compares true
// with its value; false for invalid arguments.
func TestAllVector[T Integer](p *PE, ivars Sym[T], status []bool, cmp Cmp, vals []T) bool {
	return vecArgs(p, "TestAllVector", ivars, vals) == nil && testAll(p, "TestAllVector", ivars, status, cmp, 0, vals)
}

// TestAnyVector returns the index of an element not excluded that compares
// true with its value; which of several varies, as with WaitUntilAny.
func TestAnyVector[T Integer](p *PE, ivars Sym[T], status []bool, cmp Cmp, vals []T) (int, bool) {
	if vecArgs(p, "TestAnyVector", ivars, vals) != nil {
		return -1, false
	}
	return testAny(p, "TestAnyVector", ivars, status, cmp, 0, vals)
}

// TestSomeVector returns the indices of the elements not excluded that
// compare true with their values.
func TestSomeVector[T Integer](p *PE, ivars Sym[T], status []bool, cmp Cmp, vals []T) []int {
	if vecArgs(p, "TestSomeVector", ivars, vals) != nil {
		return nil
	}
	return testSome(p, "TestSomeVector", ivars, status, cmp, 0, vals)
}

func vecArgs[T Integer](p *PE, op string, ivars Sym[T], vals []T) error {
	if len(vals) < ivars.n {
		return errs.New(op, p.MyPE(), errs.NoPE, errs.ErrInvalidArgument, "%d values for %d variables", len(vals), ivars.n)
	}
	return nil
}

// The shared bodies: vals nil compares every element with v.

func waitAll[T Integer](p *PE, op string, ivars Sym[T], status []bool, cmp Cmp, v T, vals []T) error {
	off, err := waitArgs(p, op, ivars, cmp, ivars.n, status)
	if err != nil {
		return err
	}
	var buf [8]int
	return p.c.WaitVector(p.waitContext(), op, off, func() bool {
		idx, live := satisfied(p, off, ivars.n, status, cmp, v, vals, buf[:0])
		return len(idx) == live
	})
}

func waitAny[T Integer](p *PE, op string, ivars Sym[T], status []bool, cmp Cmp, v T, vals []T) (int, error) {
	off, err := waitArgs(p, op, ivars, cmp, ivars.n, status)
	if err != nil {
		return -1, err
	}
	start, found := p.anyStart(ivars.n), -1
	err = p.c.WaitVector(p.waitContext(), op, off, func() bool {
		var live int
		found, live = firstFrom(p, off, ivars.n, start, status, cmp, v, vals)
		return found >= 0 || live == 0
	})
	return found, err
}

func waitSome[T Integer](p *PE, op string, ivars Sym[T], status []bool, cmp Cmp, v T, vals []T) ([]int, error) {
	off, err := waitArgs(p, op, ivars, cmp, ivars.n, status)
	if err != nil {
		return nil, err
	}
	var found []int
	err = p.c.WaitVector(p.waitContext(), op, off, func() bool {
		var live int
		found, live = satisfied(p, off, ivars.n, status, cmp, v, vals, found[:0])
		return len(found) > 0 || live == 0
	})
	return found, err
}

func testAll[T Integer](p *PE, op string, ivars Sym[T], status []bool, cmp Cmp, v T, vals []T) bool {
	off, err := testArgs(p, op, ivars, cmp, ivars.n, status)
	if err != nil {
		return false
	}
	idx, live := satisfied(p, off, ivars.n, status, cmp, v, vals, nil)
	return tested(p, len(idx) == live)
}

func testAny[T Integer](p *PE, op string, ivars Sym[T], status []bool, cmp Cmp, v T, vals []T) (int, bool) {
	off, err := testArgs(p, op, ivars, cmp, ivars.n, status)
	if err != nil {
		return -1, false
	}
	found, _ := firstFrom(p, off, ivars.n, p.anyStart(ivars.n), status, cmp, v, vals)
	return found, tested(p, found >= 0)
}

func testSome[T Integer](p *PE, op string, ivars Sym[T], status []bool, cmp Cmp, v T, vals []T) []int {
	off, err := testArgs(p, op, ivars, cmp, ivars.n, status)
	if err != nil {
		return nil
	}
	idx, _ := satisfied(p, off, ivars.n, status, cmp, v, vals, nil)
	tested(p, len(idx) > 0)
	return idx
}
