package shmem_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/sim"
)

func TestWaitUntilEveryCmp(t *testing.T) {
	cases := []struct {
		cmp      shmem.Cmp
		v, final int64
	}{
		{shmem.CmpEQ, 5, 5}, {shmem.CmpNE, 0, 3}, {shmem.CmpGT, 9, 10},
		{shmem.CmpGE, 10, 10}, {shmem.CmpLT, -1, -2}, {shmem.CmpLE, -2, -2},
	}
	run(t, 2, func(p *shmem.PE) error {
		ivars, err := shmem.Calloc[int64](p, len(cases))
		if err != nil {
			return err
		}
		for i, c := range cases {
			x := ivars.Slice(i, i+1)
			if p.MyPE() == 1 {
				// Step towards the final value so a wrong comparison would
				// release the waiter too early (and the check below fail).
				if err := shmem.P(p, x, c.final/2, 0); err != nil {
					return err
				}
				p.Fence() // else the two writes may land in either order
				if err := shmem.AtomicSet(p, x, c.final, 0); err != nil {
					return err
				}
				continue
			}
			if err := shmem.WaitUntil(p, x, c.cmp, c.v); err != nil {
				return err
			}
			if !shmem.Test(p, x, c.cmp, c.v) {
				return fmt.Errorf("Test false after WaitUntil(%v, %d) returned", c.cmp, c.v)
			}
			if c.final/2 != c.final && x.Local(p)[0] == c.final/2 && c.cmp != shmem.CmpNE {
				return fmt.Errorf("WaitUntil(%v, %d) returned on the intermediate value", c.cmp, c.v)
			}
		}
		return p.BarrierAll()
	})
}

func TestTestNoBlock(t *testing.T) {
	run(t, 1, func(p *shmem.PE) error {
		x, err := shmem.Calloc[uint32](p, 1)
		if err != nil {
			return err
		}
		x.Local(p)[0] = 7
		for _, c := range []struct {
			cmp  shmem.Cmp
			v    uint32
			want bool
		}{
			{shmem.CmpEQ, 7, true}, {shmem.CmpEQ, 8, false}, {shmem.CmpNE, 7, false},
			{shmem.CmpGT, 6, true}, {shmem.CmpGT, 7, false}, {shmem.CmpGE, 7, true},
			{shmem.CmpLT, 8, true}, {shmem.CmpLT, 7, false}, {shmem.CmpLE, 7, true}, {shmem.CmpLE, 6, false},
		} {
			if got := shmem.Test(p, x, c.cmp, c.v); got != c.want {
				return fmt.Errorf("Test(7 %v %d) = %v", c.cmp, c.v, got)
			}
		}
		if shmem.Test(p, x, shmem.Cmp(0), 7) || shmem.Test(p, x, shmem.Cmp(99), 7) {
			return fmt.Errorf("Test accepted an invalid comparison")
		}
		return nil
	})
}

func TestWaitAllAnySome(t *testing.T) {
	const n = 6
	run(t, 2, func(p *shmem.PE) error {
		iv, err := shmem.Calloc[int32](p, n)
		if err != nil {
			return err
		}
		step, err := shmem.Calloc[int64](p, 1)
		if err != nil {
			return err
		}
		if p.MyPE() == 1 {
			// Round 1: set 2 and 4. Round 2: set all but 0 (which is excluded).
			for _, i := range []int{2, 4} {
				if err := shmem.P(p, iv.Slice(i, i+1), 1, 0); err != nil {
					return err
				}
				p.Fence() // the waiter relies on 2 landing before 4
			}
			if err := shmem.WaitUntil(p, step, shmem.CmpEQ, 1); err != nil {
				return err
			}
			for _, i := range []int{1, 3, 5} {
				if err := shmem.P(p, iv.Slice(i, i+1), 1, 0); err != nil {
					return err
				}
			}
			return p.BarrierAll()
		}
		status := make([]bool, n)
		status[0] = true // excluded: never set
		idx, err := shmem.WaitUntilSome(p, iv, status, shmem.CmpEQ, 1)
		if err != nil {
			return err
		}
		// 2 is set first, but the scan may pass index 2 just before it is
		// set and find 4: any non-empty ascending subset of {2, 4}.
		if !slices.Equal(idx, []int{2}) && !slices.Equal(idx, []int{4}) && !slices.Equal(idx, []int{2, 4}) {
			return fmt.Errorf("WaitUntilSome = %v, want [2], [4] or [2 4]", idx)
		}
		if err := shmem.WaitUntil(p, iv.Slice(4, 5), shmem.CmpEQ, 1); err != nil {
			return err
		}
		if got := shmem.TestSome(p, iv, status, shmem.CmpEQ, 1); !slices.Equal(got, []int{2, 4}) {
			return fmt.Errorf("TestSome = %v, want [2 4]", got)
		}
		status[2] = true
		if i, ok := shmem.TestAny(p, iv, status, shmem.CmpEQ, 1); !ok || i != 4 {
			return fmt.Errorf("TestAny = %d, %v, want 4, true", i, ok)
		}
		any, err := shmem.WaitUntilAny(p, iv, status, shmem.CmpEQ, 1)
		if err != nil || any != 4 {
			return fmt.Errorf("WaitUntilAny = %d, %v, want 4", any, err)
		}
		if shmem.TestAll(p, iv, status, shmem.CmpEQ, 1) {
			return fmt.Errorf("TestAll true before round 2")
		}
		if shmem.TestAll(p, iv, nil, shmem.CmpEQ, 1) {
			return fmt.Errorf("TestAll with nil status true while element 0 is 0")
		}
		if err := shmem.P(p, step, 1, 1); err != nil {
			return err
		}
		if err := shmem.WaitUntilAll(p, iv, status, shmem.CmpEQ, 1); err != nil {
			return err
		}
		for i := 1; i < n; i++ {
			if err := want(p, fmt.Sprintf("iv[%d]", i), iv.Local(p)[i], int32(1)); err != nil {
				return err
			}
		}
		if !shmem.TestAll(p, iv, status, shmem.CmpEQ, 1) {
			return fmt.Errorf("TestAll false after WaitUntilAll")
		}
		// Everything excluded: Any and Some return at once with nothing.
		all := []bool{true, true, true, true, true, true}
		if i, err := shmem.WaitUntilAny(p, iv, all, shmem.CmpEQ, 1); i != -1 || err != nil {
			return fmt.Errorf("WaitUntilAny, all excluded = %d, %v", i, err)
		}
		if s, err := shmem.WaitUntilSome(p, iv, all, shmem.CmpEQ, 1); len(s) != 0 || err != nil {
			return fmt.Errorf("WaitUntilSome, all excluded = %v, %v", s, err)
		}
		if err := shmem.WaitUntilAll(p, iv, all, shmem.CmpEQ, 99); err != nil {
			return err
		}
		if i, ok := shmem.TestAny(p, iv, all, shmem.CmpEQ, 1); ok || i != -1 {
			return fmt.Errorf("TestAny, all excluded = %d, %v", i, ok)
		}
		return p.BarrierAll()
	})
}

// TestWaitShortStatus: a status slice shorter than the ivars is an error,
// not an out-of-range panic.
func TestWaitShortStatus(t *testing.T) {
	run(t, 1, func(p *shmem.PE) error {
		iv, err := shmem.Calloc[int64](p, 4)
		if err != nil {
			return err
		}
		short := []bool{false}
		for _, e := range []error{
			shmem.WaitUntilAll(p, iv, short, shmem.CmpEQ, 0),
			second(shmem.WaitUntilAny(p, iv, short, shmem.CmpEQ, 0)),
			second(shmem.WaitUntilSome(p, iv, short, shmem.CmpEQ, 0)),
		} {
			if err := wantErr(e, shmem.ErrInvalidArgument, "WaitUntil", "status has 1 entries for 4"); err != nil {
				return err
			}
		}
		if shmem.TestAll(p, iv, short, shmem.CmpEQ, 0) || shmem.TestSome(p, iv, short, shmem.CmpEQ, 0) != nil {
			return fmt.Errorf("Test forms accepted a short status")
		}
		return nil
	})
}

func second[A, B any](_ A, b B) B { return b }

// The _any forms: "if an entry i within the test set satisfies the test
// condition, a series of calls must eventually return i" (OpenSHMEM 1.5,
// shmem_test_any and the others). Every element but the excluded one
// holds, and each form, called over and over, returns each of them, also
// when calls on another array come between. A form that always scanned
// from 0 would return only the first.
func TestAnyReturnsEveryHolder(t *testing.T) {
	run(t, 1, func(p *shmem.PE) error {
		const n = 7
		iv, err := shmem.Calloc[int64](p, n)
		if err != nil {
			return err
		}
		other, err := shmem.Calloc[int64](p, 3)
		if err != nil {
			return err
		}
		for i := range iv.Local(p) {
			iv.Local(p)[i] = 1
		}
		other.Local(p)[0] = 1
		status := make([]bool, n)
		status[3] = true
		ones := slices.Repeat([]int64{1}, n)
		forms := map[string]func() (int, error){
			"TestAny": func() (int, error) {
				i, ok := shmem.TestAny(p, iv, status, shmem.CmpEQ, 1)
				if !ok {
					return i, fmt.Errorf("none found")
				}
				return i, nil
			},
			"WaitUntilAny": func() (int, error) { return shmem.WaitUntilAny(p, iv, status, shmem.CmpEQ, 1) },
			"TestAnyVector": func() (int, error) {
				i, ok := shmem.TestAnyVector(p, iv, status, shmem.CmpEQ, ones)
				if !ok {
					return i, fmt.Errorf("none found")
				}
				return i, nil
			},
			"WaitUntilAnyVector": func() (int, error) { return shmem.WaitUntilAnyVector(p, iv, status, shmem.CmpEQ, ones) },
		}
		for name, call := range forms {
			seen := map[int]bool{}
			for c := 0; c < 100 && len(seen) < n-1; c++ {
				i, err := call()
				if err != nil || i < 0 || i >= n || status[i] {
					return fmt.Errorf("%s = %d, %v: want an index that holds", name, i, err)
				}
				seen[i] = true
				// Another array's call between two of this one's.
				if j, ok := shmem.TestAny(p, other, nil, shmem.CmpEQ, 1); !ok || j != 0 {
					return fmt.Errorf("TestAny on the other array = %d, %v, want 0", j, ok)
				}
			}
			if len(seen) != n-1 {
				return fmt.Errorf("%s returned only %v in 100 calls; want every index but 3", name, slices.Sorted(maps.Keys(seen)))
			}
		}
		return nil
	})
}

// TestTestLoopOverTCP: two PEs over TCP play ping-pong, each spinning on
// Test (odd rounds) or SignalFetch (even ones) for the other's put, as
// many OpenSHMEM programs wait: every round's value arrives. Spinning
// goroutines once kept the network readers off the cores (190 ms a round
// trip, and some runs never finished 100), so the rounds also make a
// regression show as this test's timeout. One P, as a PE bound to one
// core has.
func TestTestLoopOverTCP(t *testing.T) {
	const rounds = 300
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	staticsWorld(t, 2, 8, []shmem.Option{shmem.WithNetworkOnly()}, func(p *shmem.PE, _ []byte) error {
		flag, err := shmem.Calloc[uint64](p, 1)
		if err != nil {
			return err
		}
		me, other := p.MyPE(), 1-p.MyPE()
		for i := uint64(1); i <= rounds; i++ {
			if (i%2 == 1) == (me == 1) {
				if i%2 == 1 {
					for !shmem.Test(p, flag, shmem.CmpEQ, i) {
					}
				} else {
					for shmem.SignalFetch(p, flag) != i {
					}
				}
				continue
			}
			shmem.P(p, flag, i, other)
			if err := p.Quiet(); err != nil {
				return err
			}
		}
		return p.BarrierAll()
	})
}

// TestWaitsEndWithContext: every wait of a WithContext handle on a word
// nobody sets ends when its context is done, with an error naming the
// call that wraps the context's; a condition that holds returns nil
// whatever the context says; the PE's own handle keeps no context.
func TestWaitsEndWithContext(t *testing.T) {
	run(t, 2, func(p *shmem.PE) error {
		flags, err := shmem.Calloc[int64](p, 2)
		if err != nil {
			return err
		}
		sig, err := shmem.Calloc[uint64](p, 1)
		if err != nil {
			return err
		}
		if p.MyPE() == 0 {
			canceled, cancel := context.WithCancel(context.Background())
			cancel()
			c := p.WithContext(canceled)
			status := []bool{false, false}
			vals := []int64{1, 1}
			waits := map[string]func() error{
				"WaitUntil":    func() error { return shmem.WaitUntil(c, flags, shmem.CmpEQ, 1) },
				"WaitUntilAll": func() error { return shmem.WaitUntilAll(c, flags, status, shmem.CmpEQ, 1) },
				"WaitUntilAny": func() error { _, err := shmem.WaitUntilAny(c, flags, status, shmem.CmpEQ, 1); return err },
				"WaitUntilSome": func() error {
					_, err := shmem.WaitUntilSome(c, flags, status, shmem.CmpEQ, 1)
					return err
				},
				"WaitUntilAllVector": func() error { return shmem.WaitUntilAllVector(c, flags, status, shmem.CmpEQ, vals) },
				"WaitUntilAnyVector": func() error {
					_, err := shmem.WaitUntilAnyVector(c, flags, status, shmem.CmpEQ, vals)
					return err
				},
				"WaitUntilSomeVector": func() error {
					_, err := shmem.WaitUntilSomeVector(c, flags, status, shmem.CmpEQ, vals)
					return err
				},
				"SignalWaitUntil": func() error { _, err := shmem.SignalWaitUntil(c, sig, shmem.CmpEQ, 1); return err },
			}
			for op, wait := range waits {
				if err := wantErr(wait(), context.Canceled, op, "context"); err != nil {
					return err
				}
			}
			if err := shmem.WaitUntil(c, flags, shmem.CmpEQ, 0); err != nil {
				return fmt.Errorf("a wait whose condition holds: %v", err)
			}
			// A deadline that passes while the wait sleeps ends it.
			timed, stop := context.WithTimeout(context.Background(), 20*time.Millisecond)
			defer stop()
			if err := wantErr(shmem.WaitUntil(p.WithContext(timed), flags, shmem.CmpEQ, 1), context.DeadlineExceeded, "WaitUntil"); err != nil {
				return err
			}
			// The PE's own handle waits on, until PE 1 sets the flag.
			if err := shmem.P(p, sig, 1, 1); err != nil {
				return err
			}
			if err := p.Quiet(); err != nil {
				return err
			}
			return shmem.WaitUntil(p, flags, shmem.CmpEQ, 7)
		}
		if _, err := shmem.SignalWaitUntil(p, sig, shmem.CmpEQ, 1); err != nil {
			return err
		}
		return errors.Join(shmem.P(p, flags, 7, 0), p.Quiet())
	}, sim.WithDeadlockGrace(-1))
}
