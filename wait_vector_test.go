package shmem_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/goshmem/shmem"
)

// The _vector waits against randomized contents, masks and values: each
// result equals the one computed element by element, and the blocking
// forms return at once when the condition holds (PE 1 sets the elements
// that make it hold, remotely).
func TestVectorWaitsRandomMasks(t *testing.T) {
	seed := rand.Uint64()
	run(t, 2, func(p *shmem.PE) error {
		rng := rand.New(rand.NewPCG(seed, 7))
		const k = 37
		ivars, err := shmem.Calloc[int32](p, k)
		if err != nil {
			return err
		}
		for round := 0; round < 50; round++ {
			cmp := shmem.Cmp(1 + rng.IntN(6))
			vals := make([]int32, k)
			cur := make([]int32, k)
			status := make([]bool, k)
			for i := range vals {
				vals[i], cur[i] = int32(rng.IntN(5)), int32(rng.IntN(5))
				status[i] = rng.IntN(3) == 0
			}
			if p.MyPE() == 1 {
				if err := shmem.Put(p, ivars, cur, 0); err != nil {
					return err
				}
			}
			if err := p.BarrierAll(); err != nil {
				return err
			}
			if p.MyPE() == 0 {
				var hit []int
				live := 0
				for i := range cur {
					if status[i] {
						continue
					}
					live++
					if holds(cur[i], cmp, vals[i]) {
						hit = append(hit, i)
					}
				}
				if got := shmem.TestAllVector(p, ivars, status, cmp, vals); got != (len(hit) == live) {
					return fmt.Errorf("seed %d round %d: TestAllVector = %v with %d of %d holding", seed, round, got, len(hit), live)
				}
				i, ok := shmem.TestAnyVector(p, ivars, status, cmp, vals)
				if ok != (len(hit) > 0) || (ok && !slices.Contains(hit, i)) {
					return fmt.Errorf("seed %d round %d: TestAnyVector = %d, %v; holding %v", seed, round, i, ok, hit)
				}
				if got := shmem.TestSomeVector(p, ivars, status, cmp, vals); !slices.Equal(got, hit) {
					return fmt.Errorf("seed %d round %d: TestSomeVector = %v, want %v", seed, round, got, hit)
				}
				if len(hit) > 0 {
					j, err := shmem.WaitUntilAnyVector(p, ivars, status, cmp, vals)
					if err != nil || !slices.Contains(hit, j) {
						return fmt.Errorf("seed %d round %d: WaitUntilAnyVector = %d, %v", seed, round, j, err)
					}
					some, err := shmem.WaitUntilSomeVector(p, ivars, status, cmp, vals)
					if err != nil || !slices.Equal(some, hit) {
						return fmt.Errorf("seed %d round %d: WaitUntilSomeVector = %v, %v", seed, round, some, err)
					}
				}
			}
			if err := p.BarrierAll(); err != nil {
				return err
			}
		}
		// The blocking All form: PE 1 writes the awaited values one by one.
		vals := make([]int32, k)
		for i := range vals {
			vals[i] = int32(i + 100)
		}
		if p.MyPE() == 1 {
			for i := range vals {
				if err := shmem.P(p, ivars.Slice(i, i+1), vals[i], 0); err != nil {
					return err
				}
			}
		} else if err := shmem.WaitUntilAllVector(p, ivars, nil, shmem.CmpEQ, vals); err != nil {
			return err
		}
		if err := wantErr(shmem.WaitUntilAllVector(p, ivars, nil, shmem.CmpEQ, vals[:3]), shmem.ErrInvalidArgument, "WaitUntilAllVector", "3 values"); err != nil {
			return err
		}
		return p.BarrierAll()
	})
}

func holds(a int32, c shmem.Cmp, b int32) bool {
	switch c {
	case shmem.CmpEQ:
		return a == b
	case shmem.CmpNE:
		return a != b
	case shmem.CmpGT:
		return a > b
	case shmem.CmpGE:
		return a >= b
	case shmem.CmpLT:
		return a < b
	}
	return a <= b
}

// Context bad input: unknown options, a nil team, a nil fetch pointer.
func TestContextAndNBIBadInput(t *testing.T) {
	run(t, 2, func(p *shmem.PE) error {
		word, err := shmem.Calloc[int64](p, 1)
		if err != nil {
			return err
		}
		if _, err := p.CreateCtx(shmem.CtxOption(64)); !isInvalid(err) {
			return fmt.Errorf("CreateCtx(64): %v", err)
		}
		var nilTeam *shmem.Team
		if _, err := nilTeam.CreateCtx(); !isInvalid(err) {
			return fmt.Errorf("CreateCtx on a nil team: %v", err)
		}
		if err := wantErr(shmem.AtomicFetchAddNBI(p, nil, word, 1, 0), shmem.ErrInvalidArgument, "AtomicFetchAddNBI", "nil"); err != nil {
			return err
		}
		ctx, err := p.CreateCtx(shmem.CtxPrivate, shmem.CtxNostore)
		if err != nil {
			return err
		}
		if ctx.CtxOptions() != shmem.CtxPrivate|shmem.CtxNostore || p.CtxOptions() != 0 {
			return fmt.Errorf("options %d / %d", ctx.CtxOptions(), p.CtxOptions())
		}
		if err := wantErr(shmem.Put(ctx, word, []int64{1}, 2), shmem.ErrInvalidArgument, "Put", "PE 2"); err != nil {
			return err
		}
		return ctx.Destroy()
	})
}
