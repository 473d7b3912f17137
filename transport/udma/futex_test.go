package udma

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goshmem/shmem/transport"
)

var _ transport.Bell = (*FutexBell)(nil)

// bellWords holds a bell's two words in ordinary Go memory: futex works on
// any mapped word, shared or not.
type bellWords struct{ waiters, seq uint32 }

func newTestBell() (*FutexBell, *bellWords) {
	w := new(bellWords)
	return NewFutexBell(&w.waiters, &w.seq), w
}

func TestBellRingCountsOnlyWithWaiters(t *testing.T) {
	b, w := newTestBell()
	b.Ring()
	if s := atomic.LoadUint32(&w.seq); s != 0 {
		t.Fatalf("ring without waiters moved seq to %d", s)
	}
	armed := b.Arm()
	if armed != 0 || atomic.LoadUint32(&w.waiters) != 1 {
		t.Fatalf("arm returned %d with %d waiters", armed, w.waiters)
	}
	b.Ring()
	if s := atomic.LoadUint32(&w.seq); s != 1 {
		t.Fatalf("seq %d after a ring with a waiter", s)
	}
	if !b.Wait(armed, time.Hour) { // already rung: must return at once
		t.Fatal("Wait after a ring reported a timeout")
	}
	b.Disarm()
	if n := atomic.LoadUint32(&w.waiters); n != 0 {
		t.Fatalf("%d waiters after disarm", n)
	}
}

func TestBellWaitTimesOut(t *testing.T) {
	b, w := newTestBell()
	armed := b.Arm()
	for _, timeout := range []time.Duration{0, -time.Second, 5 * time.Millisecond} {
		if b.Wait(armed, timeout) {
			t.Fatalf("Wait(%v) without a ring reported one", timeout)
		}
	}
	b.Disarm()
	if s := atomic.LoadUint32(&w.seq); s != armed {
		t.Fatalf("seq moved to %d without a ring", s)
	}
}

// waitFor is the waiter's loop from the Bell contract: arm, check, wait.
func waitFor(b transport.Bell, cond func() bool, rung *atomic.Bool, armedCh chan<- struct{}) {
	defer b.Disarm()
	armed := b.Arm()
	if armedCh != nil {
		armedCh <- struct{}{}
	}
	for !cond() {
		// No timeout to hide a lost wake-up: the test's deadline catches it.
		b.Wait(armed, time.Hour)
		if next := b.Arm(); next != armed {
			rung.Store(true)
			armed = next
		}
		b.Disarm()
	}
}

// waitDeadline waits for wg, failing the test if a ring was lost and the
// waiters still sleep after half a minute.
func waitDeadline(t *testing.T, wg *sync.WaitGroup) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("waiters were not woken")
	}
}

func TestBellWakesGoroutines(t *testing.T) {
	b, _ := newTestBell()
	var flag atomic.Uint64
	var rung atomic.Bool
	const n = 4
	armed := make(chan struct{}, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { waitFor(b, func() bool { return flag.Load() == 1 }, &rung, armed) })
	}
	for range n {
		<-armed
	}
	flag.Store(1)
	b.Ring()
	waitDeadline(t, &wg)
	if !rung.Load() {
		t.Fatal("waiters returned without seeing a ring")
	}
}

// Waiters sleep on one mapping's address and the ring comes through another
// mapping of the same page: only a shared (non-private) futex connects them.
func TestSegmentBellAcrossMappings(t *testing.T) {
	job := testJob(t)
	s := mustCreate(t, job, 0, 4096)
	p := mustOpen(t, job, 0, 4096)
	var rung atomic.Bool
	armed := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			waitFor(s.Bell(), func() bool { return transport.Load64(s.Heap(), 0) == flagValue }, &rung, armed)
		})
	}
	<-armed
	<-armed
	transport.ApplySignal(p.Heap(), 0, flagValue, transport.SignalSet)
	p.Bell().Ring()
	waitDeadline(t, &wg)
	if !rung.Load() {
		t.Fatal("waiters returned without seeing a ring")
	}
}

func TestBellHotPathAllocs(t *testing.T) {
	b, _ := newTestBell()
	if n := testing.AllocsPerRun(1000, b.Ring); n != 0 {
		t.Fatalf("Ring without waiters allocates %v", n)
	}
	if n := testing.AllocsPerRun(1000, func() {
		a := b.Arm()
		b.Ring()
		b.Wait(a, time.Second) // rung already: returns at once
		b.Disarm()
	}); n != 0 {
		t.Fatalf("arm/ring/wait/disarm allocates %v", n)
	}
}

func BenchmarkRingNoWaiters(b *testing.B) {
	bell, _ := newTestBell()
	b.ReportAllocs()
	for b.Loop() {
		bell.Ring()
	}
}

// BenchmarkWakeRoundTrip measures one ping-pong between two goroutines that
// each sleep on their own bell until the other writes and rings.
func BenchmarkWakeRoundTrip(b *testing.B) {
	pingBell, _ := newTestBell()
	pongBell, _ := newTestBell()
	var ping, pong atomic.Uint64
	wait := func(bell *FutexBell, w *atomic.Uint64, v uint64) {
		for {
			armed := bell.Arm()
			if w.Load() >= v {
				bell.Disarm()
				return
			}
			bell.Wait(armed, time.Minute)
			bell.Disarm()
		}
	}
	n := uint64(b.N)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := uint64(1); i <= n; i++ {
			wait(pingBell, &ping, i)
			pong.Store(i)
			pongBell.Ring()
		}
	}()
	b.ReportAllocs()
	b.ResetTimer()
	for i := uint64(1); i <= n; i++ {
		ping.Store(i)
		pingBell.Ring()
		wait(pongBell, &pong, i)
	}
	<-done
}

// TestBellCoalescesPendingRings: while a wake is pending, rings do not move
// the count (no syscall); the next Arm clears the pending bit, so the ring
// after it wakes again and a waiter armed before never sleeps through it.
func TestBellCoalescesPendingRings(t *testing.T) {
	b, w := newTestBell()
	armed := b.Arm()
	b.Ring()
	b.Ring()
	b.Ring()
	if s := atomic.LoadUint32(&w.seq); s != armed+1 {
		t.Fatalf("seq %d after three rings with one pending, want %d", s, armed+1)
	}
	b.Wait(armed, time.Hour) // pending: returns at once
	b.Disarm()
	again := b.Arm()
	if again != armed+2 || atomic.LoadUint32(&w.seq) != again {
		t.Fatalf("re-arm returned %d with seq %d, want both %d", again, atomic.LoadUint32(&w.seq), armed+2)
	}
	b.Ring()
	if s := atomic.LoadUint32(&w.seq); s != again+1 {
		t.Fatalf("ring after re-arm left seq %d, want %d", s, again+1)
	}
	b.Wait(again, time.Hour)
	b.Disarm()
}
