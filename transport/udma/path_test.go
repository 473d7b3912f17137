package udma

import (
	"bytes"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goshmem/shmem/transport"
)

// TestPathLargeTransfers moves sizes around transport.Copy's piece size
// through a path to a second mapping of a segment and reads them back
// through the first: every byte lands, none beside the target range.
func TestPathLargeTransfers(t *testing.T) {
	job := testJob(t)
	const heap = 4 << 20
	s := mustCreate(t, job, 0, heap)
	peer := mustOpen(t, job, 0, heap)
	var fence atomic.Uint64
	p := NewPath(peer.Heap(), s.Bell(), &fence, true)
	for _, n := range []int{8, 4095, 512 << 10, 512<<10 + 1, 3<<20 + 17} {
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(i*13 + n)
		}
		clear(s.Heap())
		const off = 64
		if err := p.Put(off, src); err != nil {
			t.Fatal(err)
		}
		mem := s.Heap()
		if !bytes.Equal(mem[off:off+n], src) {
			t.Fatalf("put of %d bytes differs", n)
		}
		if bytes.Count(mem[:off], []byte{0}) != off || bytes.Count(mem[off+n:], []byte{0}) != heap-off-n {
			t.Fatalf("put of %d bytes wrote outside its range", n)
		}
		got := make([]byte, n)
		if err := p.Get(got, off); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, src) {
			t.Fatalf("get of %d bytes differs", n)
		}
		const sig = heap - 8
		if err := p.PutSignal(off, src[:n/2], sig, uint64(n), transport.SignalSet); err != nil {
			t.Fatal(err)
		}
		if transport.Load64(mem, sig) != uint64(n) {
			t.Fatalf("signal after a put of %d bytes is %d", n/2, transport.Load64(mem, sig))
		}
	}
}

// TestPathWordOps: the word operations act on the 8 bytes at off, ring
// only when the caller asks (Ring), and a word that does not lie wholly
// inside the mapping panics in a bounds check, as the slice operations do.
func TestPathWordOps(t *testing.T) {
	mem := make([]byte, 64)
	bell := &countingBell{}
	p := NewPath(mem, bell, new(atomic.Uint64), true)
	p.Write64(56, 7)
	if got := p.Load64(56); got != 7 {
		t.Fatalf("Load64 after Write64 7: %d", got)
	}
	if old := p.FetchAdd64(56, 5); old != 7 || p.Load64(56) != 12 {
		t.Fatalf("FetchAdd64(5) on 7: old %d, now %d; want 7, 12", old, p.Load64(56))
	}
	if old := p.CompareSwap64(56, 11, 1); old != 12 || p.Load64(56) != 12 {
		t.Fatalf("CompareSwap64(11, 1) on 12: old %d, now %d; want 12 unchanged", old, p.Load64(56))
	}
	if old := p.CompareSwap64(56, 12, 1); old != 12 || p.Load64(56) != 1 {
		t.Fatalf("CompareSwap64(12, 1) on 12: old %d, now %d; want 12, 1", old, p.Load64(56))
	}
	if bell.rings != 0 {
		t.Fatalf("%d rings before Ring, want 0", bell.rings)
	}
	p.Ring()
	if bell.rings != 1 {
		t.Fatalf("%d rings after Ring, want 1 (a Bell other than a FutexBell is always rung)", bell.rings)
	}
	for _, off := range []uint64{57, 64, 1 << 40, ^uint64(0) - 3} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Load64(%d) of a 64-byte mapping did not panic", off)
				}
			}()
			p.Load64(off)
		}()
	}
	small := NewPath(make([]byte, 7), bell, new(atomic.Uint64), true)
	func() {
		defer func() {
			if recover() == nil {
				t.Errorf("Write64(0) of a 7-byte mapping did not panic")
			}
		}()
		small.Write64(0, 1)
	}()
}

// countingBell counts its rings.
type countingBell struct{ rings int }

func (b *countingBell) Ring()                           { b.rings++ }
func (b *countingBell) Arm() uint32                     { return 0 }
func (b *countingBell) Wait(uint32, time.Duration) bool { return false }
func (b *countingBell) Disarm()                         {}

// TestPlainPutsSkipSyncWaiters: a plain put rings the peer's bell only for
// waiters armed with Arm (which may wait for its bytes); one armed with
// ArmSync (a team operation's) is woken by signals, atomics and 8-byte
// flags, not by the data before them.
func TestPlainPutsSkipSyncWaiters(t *testing.T) {
	job := testJob(t)
	s := mustCreate(t, job, 0, 1<<20)
	peer := mustOpen(t, job, 0, 1<<20)
	waiter := s.Bell().(*FutexBell)
	p := NewPath(peer.Heap(), peer.Bell(), new(atomic.Uint64), true)
	data := make([]byte, 100)
	rang := func(armed uint32) bool { return atomic.LoadUint32(waiter.seq) != armed }

	armed := waiter.ArmSync()
	if err := p.Put(64, data); err != nil {
		t.Fatal(err)
	}
	if rang(armed) {
		t.Error("a plain put woke a sync waiter")
	}
	for _, w := range []struct {
		name  string
		write func() error
	}{
		{"PutSignal", func() error { return p.PutSignal(64, data, 8, 1, transport.SignalSet) }},
		{"8-byte put", func() error { return p.Put(8, make([]byte, 8)) }},
		{"atomic", func() error { return p.AtomicPost(transport.AtomicFetchAdd, 8, 8, 1) }},
	} {
		if err := w.write(); err != nil {
			t.Fatal(err)
		}
		if !rang(armed) {
			t.Errorf("%s did not wake a sync waiter", w.name)
		}
		waiter.DisarmSync()
		armed = waiter.ArmSync()
	}
	waiter.DisarmSync()

	armed = waiter.Arm()
	if err := p.Put(64, data); err != nil {
		t.Fatal(err)
	}
	if !rang(armed) {
		t.Error("a plain put did not wake a data waiter")
	}
	waiter.Disarm()
	if n, d := atomic.LoadUint32(waiter.waiters), atomic.LoadUint32(waiter.data); n != 0 || d != 0 {
		t.Errorf("after disarming: %d waiters, %d data waiters", n, d)
	}
}
