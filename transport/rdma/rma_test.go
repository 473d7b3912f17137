package rdma

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/goshmem/shmem/transport"
)

// The Path contract (values at every size, atomics, signals, Fence, Quiet,
// bounds, failures) is checked by the shared suite: see pathtest_test.go.
// What stays here is particular to this provider.

func load(h []byte, off uint64, width int) uint64 {
	if width == 4 {
		return uint64(transport.Load32(h, off))
	}
	return transport.Load64(h, off)
}

// Remote adds and the target PE's own local atomic adds to one word never
// lose an update: the server applies remote atomics with the same hardware
// atomics a PE uses on its own heap.
func TestAtomicNoLostUpdate(t *testing.T) {
	w := newWorld(t, 2, 4096, nil)
	p, eng := w.path(0, 1), w.nodes[0].Engine()
	const remote, local, goroutines = 2000, 5000, 4
	for _, width := range []int{4, 8} {
		off := uint64(width * 16)
		var wg sync.WaitGroup
		errc := make(chan error, goroutines)
		for g := 0; g < goroutines; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < remote/goroutines; i++ {
					var err error
					if i%2 == 0 {
						_, err = p.Atomic(transport.AtomicFetchAdd, width, off, 1, 0)
					} else {
						err = p.AtomicPost(transport.AtomicFetchAdd, width, off, 1)
					}
					if err != nil {
						errc <- err
						return
					}
				}
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < local; i++ {
				transport.ApplyAtomic(w.heaps[1], transport.AtomicFetchAdd, width, off, 1, 0)
			}
		}()
		wg.Wait()
		close(errc)
		for err := range errc {
			t.Fatal(err)
		}
		if err := eng.Quiet(); err != nil {
			t.Fatal(err)
		}
		if got := load(w.heaps[1], off, width); got != remote+local {
			t.Fatalf("width %d: word %d, want %d", width, got, remote+local)
		}
	}
}

// waitWord waits on rank r's bell until the 8-byte word at off equals v.
func (w *world) waitWord(r int, off, v uint64) error {
	b := w.bells[r]
	deadline := time.Now().Add(20 * time.Second)
	for {
		armed := b.Arm()
		if transport.Load64(w.heaps[r], off) == v {
			b.Disarm()
			return nil
		}
		if time.Now().After(deadline) {
			b.Disarm()
			return fmt.Errorf("word at %d never became %d", off, v)
		}
		b.Wait(armed, time.Second)
		b.Disarm()
	}
}
