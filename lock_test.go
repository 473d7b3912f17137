package shmem_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/goshmem/shmem"
)

// TestLockMutualExclusion has every PE (two goroutines each) increment a
// counter on PE 1 with a non-atomic read-modify-write under the lock, and
// count how many are inside at once. Every contender finishing its rounds
// is the liveness check; the exact final count and an occupancy that never
// exceeds one are the safety checks.
func TestLockMutualExclusion(t *testing.T) {
	for _, n := range []int{1, 3, 8} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			const rounds, goroutines = 30, 2
			run(t, n, func(p *shmem.PE) error {
				lock, _ := shmem.Calloc[int64](p, 1)
				ctr, _ := shmem.Calloc[int64](p, 1)
				inside, err := shmem.Calloc[int64](p, 1)
				if err != nil {
					return err
				}
				home := 1 % n
				var wg sync.WaitGroup
				errc := make(chan error, goroutines)
				for g := 0; g < goroutines; g++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := 0; i < rounds; i++ {
							if err := shmem.SetLock(p, lock); err != nil {
								errc <- err
								return
							}
							if occ, _ := shmem.AtomicFetchInc(p, inside, home); occ != 0 {
								errc <- fmt.Errorf("PE %d entered the lock with %d others inside", p.MyPE(), occ)
								return
							}
							v, err := shmem.G(p, ctr, home)
							if err == nil {
								err = shmem.P(p, ctr, v+1, home)
							}
							if err == nil {
								err = shmem.AtomicAdd(p, inside, -1, home)
							}
							if err == nil {
								err = shmem.ClearLock(p, lock)
							}
							if err != nil {
								errc <- err
								return
							}
						}
					}()
				}
				wg.Wait()
				close(errc)
				if err := <-errc; err != nil {
					return err
				}
				if err := p.BarrierAll(); err != nil {
					return err
				}
				got, err := shmem.G(p, ctr, home)
				if err != nil {
					return err
				}
				return want(p, "counter", got, int64(n*rounds*goroutines))
			})
		})
	}
}

func TestTestLock(t *testing.T) {
	run(t, 2, func(p *shmem.PE) error {
		lock, _ := shmem.Calloc[int64](p, 1)
		data, _ := shmem.Calloc[int64](p, 8)
		turn, err := shmem.Calloc[int64](p, 1)
		if err != nil {
			return err
		}
		if p.MyPE() == 0 {
			ok, err := shmem.TestLock(p, lock)
			if err != nil || !ok {
				return fmt.Errorf("TestLock on a free lock = %v, %v", ok, err)
			}
			// Data put under the lock is complete when ClearLock returns.
			if err := shmem.Put(p, data, []int64{1, 2, 3, 4, 5, 6, 7, 8}, 1); err != nil {
				return err
			}
			if err := shmem.P(p, turn, 1, 1); err != nil { // PE 1 tries while held
				return err
			}
			if err := shmem.WaitUntil(p, turn, shmem.CmpEQ, 2); err != nil {
				return err
			}
			return shmem.ClearLock(p, lock)
		}
		if err := shmem.WaitUntil(p, turn, shmem.CmpEQ, 1); err != nil {
			return err
		}
		ok, err := shmem.TestLock(p, lock)
		if err != nil || ok {
			return fmt.Errorf("TestLock on a held lock = %v, %v", ok, err)
		}
		if err := shmem.P(p, turn, 2, 0); err != nil {
			return err
		}
		if err := shmem.SetLock(p, lock); err != nil {
			return err
		}
		got := make([]int64, 8)
		if err := shmem.Get(p, got, data, 1); err != nil {
			return err
		}
		if err := want(p, "data seen after the lock", got[7], int64(8)); err != nil {
			return err
		}
		if err := shmem.ClearLock(p, lock); err != nil {
			return err
		}
		ok, err = shmem.TestLock(p, lock)
		if err != nil || !ok {
			return fmt.Errorf("TestLock after release = %v, %v", ok, err)
		}
		return shmem.ClearLock(p, lock)
	})
}

// TestClearLockByNonHolder has a PE clear a lock it does not hold, first a
// free one and then one PE 0 holds: each clear is refused, naming the
// caller and the holder, and leaves the lock as it was, so that the holder
// still excludes others and later SetLock calls still get it. Before the
// check, the clear of a free lock advanced its ticket count so that every
// later SetLock waited forever, and PE 1's clear handed PE 0's lock to it.
func TestClearLockByNonHolder(t *testing.T) {
	run(t, 2, func(p *shmem.PE) error {
		l, err := shmem.Calloc[int64](p, 1)
		if err != nil {
			return err
		}
		me := p.MyPE()
		if me == 1 {
			if err := refusedClear(p, l, "no PE holds it", 0); err != nil {
				return err
			}
		}
		if err := p.BarrierAll(); err != nil {
			return err
		}
		if me == 0 {
			if err := shmem.SetLock(p, l); err != nil {
				return err
			}
		}
		if err := p.BarrierAll(); err != nil {
			return err
		}
		if me == 1 {
			if err := refusedClear(p, l, "PE 0 holds it", 1<<32); err != nil {
				return err
			}
			if ok, err := shmem.TestLock(p, l); ok || err != nil {
				return fmt.Errorf("TestLock of the lock PE 0 holds = %v, %v after PE 1's refused clear; want false", ok, err)
			}
		}
		if err := p.BarrierAll(); err != nil {
			return err
		}
		if me == 0 {
			if err := shmem.ClearLock(p, l); err != nil {
				return err
			}
		}
		if err := p.BarrierAll(); err != nil {
			return err
		}
		// Both PEs take it in turn and clear it: the lock still works.
		if err := shmem.SetLock(p, l); err != nil {
			return err
		}
		if err := shmem.ClearLock(p, l); err != nil {
			return err
		}
		if err := p.BarrierAll(); err != nil {
			return err
		}
		got, err := shmem.G(p, l, 0)
		return want(p, "lock word after two takes and clears", got, int64(3<<32|3))
	})
}

// refusedClear has PE 1 clear l, which it does not hold: the clear must
// fail naming the caller and who (holder), and leave l's word as word.
func refusedClear(p *shmem.PE, l shmem.Sym[int64], holder string, word int64) error {
	err := shmem.ClearLock(p, l)
	if err := wantErr(err, shmem.ErrInvalidArgument, "ClearLock", "(PE 1 -> PE 0)", "PE 1 does not hold", holder); err != nil {
		return err
	}
	if got, err := shmem.G(p, l, 0); err != nil || got != word {
		return fmt.Errorf("lock word after a refused clear (%s) = %#x, %v; want %#x", holder, got, err, word)
	}
	return nil
}
