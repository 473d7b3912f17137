package shmem_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/goshmem/shmem"
)

// The rounds of each TestFinalizeBesideCalls case: before the fix, a
// round faulted the process in most runs of 30 (one-PE world and sim).
const besideRounds = 30

// hammer starts goroutines that put, get and add on s at pe through p
// until a call fails, and returns once each has made some calls. wait
// returns the first failure that is not the end of the PE.
func hammer(p *shmem.PE, s shmem.Sym[int64], pe int) (wait func() error) {
	const workers = 4
	var started, done sync.WaitGroup
	errc := make(chan error, workers)
	for w := range workers {
		started.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			buf := make([]int64, 8)
			for i := 0; ; i++ {
				if i == 64 {
					started.Done()
				}
				var err error
				var call string
				switch (w + i) % 3 {
				case 0:
					call, err = "Put", shmem.Put(p, s, buf, pe)
				case 1:
					call, err = "Get", shmem.Get(p, buf, s, pe)
				default:
					call, err = "AtomicAdd", shmem.AtomicAdd(p, s, 1, pe)
				}
				if err != nil {
					if i < 64 {
						started.Done()
					}
					switch {
					case !errors.Is(err, shmem.ErrFinalized) && !errors.Is(err, shmem.ErrPEFailed):
						errc <- fmt.Errorf("call %d of a goroutine beside Finalize: %w", i, err)
					case !strings.HasPrefix(err.Error(), "shmem: "+call+" "):
						// A transport's own name (AtomicPost) is not the call's.
						errc <- fmt.Errorf("%s beside Finalize: %q does not name the call", call, err)
					}
					return
				}
			}
		}()
	}
	started.Wait()
	return func() error {
		done.Wait()
		close(errc)
		return <-errc
	}
}

// TestFinalizeBesideCalls finalizes a PE while other goroutines of the
// PE are in the middle of puts, gets and atomics, to itself and to a
// peer: each of those calls succeeds or fails with ErrFinalized (or
// ErrPEFailed, for a peer that finalized), and none faults the process
// (a call that had checked the PE ran, then copied into the heap
// Finalize had just unmapped, did; see internal/retire).
func TestFinalizeBesideCalls(t *testing.T) {
	t.Run("sim", func(t *testing.T) {
		for range besideRounds {
			run(t, 2, func(p *shmem.PE) error {
				s, err := shmem.Calloc[int64](p, 8)
				if err != nil {
					return err
				}
				wait := hammer(p, s, 1-p.MyPE())
				return errors.Join(p.Finalize(), wait())
			})
		}
	})
	t.Run("one-PE", func(t *testing.T) {
		for range besideRounds {
			p, err := shmem.Init(context.Background(), shmem.WithHeapSize(1<<20))
			if err != nil {
				t.Fatal(err)
			}
			s, err := shmem.Calloc[int64](p, 8)
			if err != nil {
				t.Fatal(err)
			}
			wait := hammer(p, s, 0)
			if err := errors.Join(p.Finalize(), wait()); err != nil {
				t.Fatal(err)
			}
		}
	})
	t.Run("shared-memory", func(t *testing.T) {
		for range besideRounds / 3 {
			staticsWorld(t, 2, 64, nil, func(p *shmem.PE, _ []byte) error {
				s, err := shmem.Calloc[int64](p, 8)
				if err != nil {
					return err
				}
				wait := hammer(p, s, 1-p.MyPE())
				return errors.Join(p.Finalize(), wait())
			})
		}
	})
	t.Run("tcp", func(t *testing.T) {
		for range besideRounds / 3 {
			staticsWorld(t, 2, 64, []shmem.Option{shmem.WithNetworkOnly()}, func(p *shmem.PE, _ []byte) error {
				s, err := shmem.Calloc[int64](p, 8)
				if err != nil {
					return err
				}
				wait := hammer(p, s, 1-p.MyPE())
				return errors.Join(p.Finalize(), wait())
			})
		}
	})
}
