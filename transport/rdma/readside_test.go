package rdma

import (
	"bytes"
	"sync"
	"testing"

	"github.com/goshmem/shmem/transport"
)

// With two slots, a GetNBI queues behind its own requests: the reader
// goroutine must read for it, since the caller is stuck issuing. A pipelined
// Get keeps no more requests in flight than there are slots.
func TestStarvedSlotsStillComplete(t *testing.T) {
	w := newWorld(t, 2, 64<<10, func(c *Config) {
		c.MaxOutstanding, c.ChunkSize, c.SmallMax, c.MaxInflight = 2, 1024, 512, 64<<10
	})
	want := pattern(32<<10, 3)
	copy(w.heaps[1], want)
	p := w.path(0, 1)
	got := make([]byte, len(want))
	if err := p.Get(got, 0); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("Get returned wrong bytes")
	}
	nbi := make([]byte, len(want))
	if err := p.GetNBI(nbi, 0); err != nil {
		t.Fatal(err)
	}
	if err := p.Engine().Quiet(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(nbi, want) {
		t.Fatal("GetNBI returned wrong bytes")
	}
}

// Many callers blocking on one lane pass the read token among themselves;
// each must get its own answer.
func TestConcurrentCallersShareTheReadSide(t *testing.T) {
	w := newWorld(t, 2, 4096, nil)
	p := w.path(0, 1)
	for i := range 64 {
		w.heaps[1][i] = byte(i)
	}
	const workers, rounds = 8, 200
	var wg sync.WaitGroup
	errc := make(chan error, workers)
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dst := make([]byte, 8)
			for r := range rounds {
				off := uint64((g + r) % 8 * 8)
				if err := p.Get(dst, off); err != nil {
					errc <- err
					return
				}
				if dst[0] != byte(off) || dst[7] != byte(off+7) {
					t.Errorf("Get at %d returned %v", off, dst)
					return
				}
				if _, err := p.Atomic(transport.AtomicFetchAdd, 8, 1024, 1, 0); err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	got, err := p.Atomic(transport.AtomicFetch, 8, 1024, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got != workers*rounds {
		t.Fatalf("counter %d, want %d", got, workers*rounds)
	}
}
