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
		t.Fatalf("%d rings before RingWord, want 0", bell.rings)
	}
	p.RingWord(56)
	if bell.rings != 1 {
		t.Fatalf("%d rings after RingWord, want 1 (a Bell other than a FutexBell is always rung)", bell.rings)
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
		{"barrier signal", func() error { p.SignalWord(8, 5); p.RingSignaled(8); return nil }},
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

// TestWordWaitersSleepThroughOtherWrites: on a bell that tells waiters
// apart by word (transport.LocalBell), a waiter armed for one word is
// woken by every kind of write that covers it and by none that misses it.
func TestWordWaitersSleepThroughOtherWrites(t *testing.T) {
	bell := transport.NewLocalBell()
	p := NewPath(make([]byte, 256), bell, new(atomic.Uint64), true)
	const word = 128
	eight := make([]byte, 8)
	for _, w := range []struct {
		name   string
		write  func() error
		covers bool
	}{
		{"8-byte put elsewhere", func() error { return p.Put(64, eight) }, false},
		{"8-byte put", func() error { return p.Put(word, eight) }, true},
		{"put of bytes before", func() error { return p.Put(0, make([]byte, word)) }, false},
		{"put of bytes over it", func() error { return p.Put(120, make([]byte, 12)) }, true},
		{"atomic elsewhere", func() error { return p.AtomicPost(transport.AtomicFetchAdd, 8, 136, 1) }, false},
		{"atomic", func() error { return p.AtomicPost(transport.AtomicFetchAdd, 8, word, 1) }, true},
		{"4-byte atomic", func() error { return p.AtomicPost(transport.AtomicFetchAdd, 4, word+4, 1) }, true},
		{"fetching atomic", func() error { _, err := p.Atomic(transport.AtomicCompareSwap, 8, word, 1, 0); return err }, true},
		{"fetching atomic elsewhere", func() error { _, err := p.Atomic(transport.AtomicFetchAdd, 8, 0, 1, 0); return err }, false},
		{"PutSignal, data elsewhere, signal on it", func() error { return p.PutSignal(0, eight, word, 1, transport.SignalSet) }, true},
		{"PutSignal, data on it", func() error { return p.PutSignal(word, eight, 0, 1, transport.SignalAdd) }, true},
		{"word op elsewhere", func() error { p.FetchAdd64(200, 1); p.RingWord(200); return nil }, false},
		{"word op", func() error { p.Write64(word, 3); p.RingWord(word); return nil }, true},
		{"barrier signal elsewhere", func() error { p.SignalWord(8, 1); p.RingSignaled(8); return nil }, false},
		{"barrier signal", func() error { p.SignalWord(word, 9); p.RingSignaled(word); return nil }, true},
	} {
		armed, slot := bell.ArmWord(word)
		if err := w.write(); err != nil {
			t.Fatalf("%s: %v", w.name, err)
		}
		if woke := bell.Wait(armed, 0); woke != w.covers {
			t.Errorf("%s: woke the word's waiter: %v, want %v", w.name, woke, w.covers)
		}
		bell.DisarmWord(slot)
	}
}

// TestSignalWordStores: SignalWord leaves its value in the peer's word
// (a barrier's count, not an add) and refuses a word outside the mapping
// as the other word operations do.
func TestSignalWordStores(t *testing.T) {
	p := NewPath(make([]byte, 64), &countingBell{}, new(atomic.Uint64), true)
	p.SignalWord(16, 7)
	p.SignalWord(16, 8)
	if got := p.Load64(16); got != 8 {
		t.Fatalf("word after signals 7 and 8: %d, want 8", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("SignalWord(60) of a 64-byte mapping did not panic")
		}
	}()
	p.SignalWord(60, 1)
}
