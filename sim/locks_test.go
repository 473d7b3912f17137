package sim_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/sim"
)

// holdLock has PE 0 take a lock with take and release it only when
// release is set; finalize has it call Finalize itself before returning.
func holdLock(take func(p *shmem.PE, l shmem.Sym[int64]) error, release, finalize bool) func(p *shmem.PE) error {
	return func(p *shmem.PE) error {
		l, err := shmem.Calloc[int64](p, 1)
		if err != nil || p.MyPE() != 0 {
			return err
		}
		if err := take(p, l); err != nil {
			return err
		}
		if release {
			if err := shmem.ClearLock(p, l); err != nil {
				return err
			}
		}
		if finalize {
			return p.Finalize()
		}
		return nil
	}
}

func setLock(p *shmem.PE, l shmem.Sym[int64]) error { return shmem.SetLock(p, l) }
func testLock(p *shmem.PE, l shmem.Sym[int64]) error {
	if ok, err := shmem.TestLock(p, l); err != nil || !ok {
		return errors.Join(err, errors.New("TestLock did not take a free lock"))
	}
	return nil
}

// TestLockLeftHeld: a PE that returns holding a lock fails Run with
// ErrInvalidArgument naming it and the lock, in Eager and Lazy mode, when
// it finalized itself too, though no other PE wanted the lock after (so
// nothing waited forever and the run used to pass); one that clears it
// passes.
func TestLockLeftHeld(t *testing.T) {
	modes := map[string][]sim.Option{"eager": nil, "lazy": lazy(3)}
	for name, opts := range modes {
		for _, take := range []struct {
			name string
			f    func(p *shmem.PE, l shmem.Sym[int64]) error
		}{{"SetLock", setLock}, {"TestLock", testLock}} {
			for _, fin := range []bool{false, true} {
				err := sim.Run(2, holdLock(take.f, false, fin), opts...)
				if !errors.Is(err, shmem.ErrInvalidArgument) || !strings.Contains(err.Error(), "PE 0 returned holding the lock at heap offset") {
					t.Errorf("%s, %s, Finalize %v: Run = %v, want ErrInvalidArgument naming the lock PE 0 holds", name, take.name, fin, err)
				}
				if err := sim.Run(2, holdLock(take.f, true, fin), opts...); err != nil {
					t.Errorf("%s, %s cleared, Finalize %v: %v", name, take.name, fin, err)
				}
			}
		}
	}
}
