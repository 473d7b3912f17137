package rdma

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
)

func TestPutGetRoundTrip(t *testing.T) {
	w := newWorld(t, 2, 20<<20, nil)
	p, eng := w.path(0, 1), w.nodes[0].Engine()
	for i, n := range []int{1, 8, 8 << 10, 8<<10 + 1, 256 << 10, 1<<20 + 3, 8 << 20} {
		off := uint64(i * 7)
		src := pattern(n, byte(i))
		if err := p.Put(off, src); err != nil {
			t.Fatalf("Put %d: %v", n, err)
		}
		if err := eng.Quiet(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(w.heaps[1][off:off+uint64(n)], src) {
			t.Fatalf("Put %d bytes: heap differs after Quiet", n)
		}
		got := make([]byte, n)
		if err := p.Get(got, off); err != nil {
			t.Fatalf("Get %d: %v", n, err)
		}
		if !bytes.Equal(got, src) {
			t.Fatalf("Get %d bytes: data differs", n)
		}
	}
	if p.Ptr(0, 8) != nil {
		t.Fatal("Ptr must be nil over the network")
	}
}

func TestGetSeesOwnEarlierBulkPut(t *testing.T) {
	w := newWorld(t, 2, 4<<20, nil)
	p := w.path(0, 1)
	src := pattern(1<<20, 3)
	if err := p.Put(0, src); err != nil { // bulk lane
		t.Fatal(err)
	}
	got := make([]byte, 8) // small lane
	if err := p.Get(got, 1<<20-8); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, src[1<<20-8:]) {
		t.Fatalf("Get after bulk Put read %v, want %v", got, src[1<<20-8:])
	}
}

func TestQuietCompletesGetNBI(t *testing.T) {
	w := newWorld(t, 2, 4<<20, nil)
	copy(w.heaps[1], pattern(4<<20, 9))
	p := w.path(0, 1)
	small, large := make([]byte, 100), make([]byte, 3<<20+5)
	if err := p.GetNBI(small, 64); err != nil {
		t.Fatal(err)
	}
	if err := p.GetNBI(large, 1000); err != nil {
		t.Fatal(err)
	}
	if err := w.nodes[0].Engine().Quiet(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(small, w.heaps[1][64:164]) || !bytes.Equal(large, w.heaps[1][1000:1000+len(large)]) {
		t.Fatal("GetNBI buffers not filled by Quiet")
	}
}

func TestAtomicOpsBothWidths(t *testing.T) {
	w := newWorld(t, 2, 4096, nil)
	p := w.path(0, 1)
	type tc struct {
		op            transport.AtomicOp
		init, operand uint64
		cond          uint64
		want          uint64 // word after
	}
	cases := []tc{
		{transport.AtomicFetch, 41, 0, 0, 41},
		{transport.AtomicSet, 1, 77, 0, 77},
		{transport.AtomicSwap, 5, 6, 0, 6},
		{transport.AtomicCompareSwap, 5, 9, 5, 9},
		{transport.AtomicCompareSwap, 5, 9, 4, 5},
		{transport.AtomicFetchAdd, 10, 3, 0, 13},
		{transport.AtomicFetchAdd, 1<<32 - 1, 1, 0, 0}, // wraps at width 4 only
		{transport.AtomicFetchAnd, 0b1100, 0b1010, 0, 0b1000},
		{transport.AtomicFetchOr, 0b1100, 0b1010, 0, 0b1110},
		{transport.AtomicFetchXor, 0b1100, 0b1010, 0, 0b0110},
	}
	for _, width := range []int{4, 8} {
		for i, c := range cases {
			off := uint64(64 + 8*i)
			mask := ^uint64(0)
			if width == 4 {
				mask = 1<<32 - 1
			}
			want := c.want
			if c.op == transport.AtomicFetchAdd && c.init == 1<<32-1 && width == 8 {
				want = 1 << 32
			}
			for _, post := range []bool{false, true} {
				if post && (c.op == transport.AtomicFetch || c.op == transport.AtomicCompareSwap) {
					continue
				}
				store(w.heaps[1], off, width, c.init)
				var old uint64
				var err error
				if post {
					err = p.AtomicPost(c.op, width, off, c.operand)
					if err == nil {
						err = w.nodes[0].Engine().Quiet()
					}
				} else {
					old, err = p.Atomic(c.op, width, off, c.operand, c.cond)
				}
				if err != nil {
					t.Fatalf("width %d op %d: %v", width, c.op, err)
				}
				if !post && old != c.init&mask {
					t.Errorf("width %d op %d: old %d, want %d", width, c.op, old, c.init&mask)
				}
				if got := load(w.heaps[1], off, width); got != want&mask {
					t.Errorf("width %d op %d post %v: word %d, want %d", width, c.op, post, got, want&mask)
				}
			}
		}
	}
	if _, err := p.Atomic(transport.AtomicFetchAdd, 2, 0, 1, 0); !errors.Is(err, errs.ErrInvalidArgument) {
		t.Fatalf("width 2: %v, want ErrInvalidArgument", err)
	}
}

func store(h []byte, off uint64, width int, v uint64) {
	transport.ApplyAtomic(h, transport.AtomicSet, width, off, v, 0)
}

func load(h []byte, off uint64, width int) uint64 {
	if width == 4 {
		return uint64(transport.Load32(h, off))
	}
	return transport.Load64(h, off)
}

// Remote and local adds to one word never lose an update.
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

func TestPutSignalOrdering(t *testing.T) {
	w := newWorld(t, 2, 4<<20, nil)
	p := w.path(0, 1)
	const sig = 0
	for i, n := range []int{0, 8, 4000, 3 << 20} {
		src := pattern(n, byte(i+1))
		done := make(chan error, 1)
		go func() {
			if err := w.waitWord(1, sig, uint64(i+1)); err != nil {
				done <- err
				return
			}
			if !bytes.Equal(w.heaps[1][64:64+n], src) {
				done <- fmt.Errorf("size %d: signal seen before data", n)
				return
			}
			done <- nil
		}()
		if err := p.PutSignal(64, src, sig, uint64(i+1), transport.SignalSet); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if err := p.PutSignal(64, nil, sig, 10, transport.SignalAdd); err != nil {
		t.Fatal(err)
	}
	if err := w.waitWord(1, sig, 14); err != nil {
		t.Fatal(err)
	}
}

// After Fence, a small write (small lane) is never seen before a large one
// (bulk lane) issued before the Fence.
func TestFenceOrdering(t *testing.T) {
	w := newWorld(t, 2, 2<<20, nil)
	p, eng := w.path(0, 1), w.nodes[0].Engine()
	const flag, data, n = 0, 4096, 1 << 20
	for k := uint64(1); k <= 20; k++ {
		src := bytes.Repeat([]byte{byte(k)}, n)
		done := make(chan error, 1)
		go func() {
			if err := w.waitWord(1, flag, k); err != nil {
				done <- err
				return
			}
			if !bytes.Equal(w.heaps[1][data:data+n], src) {
				done <- fmt.Errorf("round %d: flag overtook data across Fence", k)
				return
			}
			done <- nil
		}()
		if err := p.Put(data, src); err != nil {
			t.Fatal(err)
		}
		if err := eng.Fence(); err != nil {
			t.Fatal(err)
		}
		if err := p.AtomicPost(transport.AtomicSet, 8, flag, k); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}
