package simnet

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goshmem/shmem/transport"
)

// traceAll is a Config.Trace that closes seen once every line of want has
// been written (in any order).
type traceAll struct {
	mu   sync.Mutex
	want map[string]bool
	seen chan struct{}
}

func newTraceAll(want ...string) *traceAll {
	s := &traceAll{want: map[string]bool{}, seen: make(chan struct{})}
	for _, w := range want {
		s.want[w] = true
	}
	return s
}

func (s *traceAll) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for w := range s.want {
		if strings.Contains(string(b), w) {
			delete(s.want, w)
			if len(s.want) == 0 {
				close(s.seen)
			}
		}
	}
	return len(b), nil
}

// TestRingBeforeWaitIsKept: a ring between one goroutine's Arm and its
// Wait ends that Wait at once, though another goroutine of the PE armed
// in between. The PE once kept one "rung" flag, which every Arm cleared:
// the first goroutine then slept through the write it waited for.
func TestRingBeforeWaitIsKept(t *testing.T) {
	n := New(Config{NPEs: 1, Deadlock: ignoreDeadlock})
	b := n.Bell(0, transport.NewLocalBell(), make([]byte, 64))
	n.Start(0)
	first := b.Arm()
	b.Ring()    // what the first goroutine waits for lands
	_ = b.Arm() // a second goroutine of the PE arms for a wait of its own
	done := make(chan bool, 1)
	go func() { done <- b.Wait(first, time.Second) }()
	select {
	case rung := <-done:
		if !rung {
			t.Fatal("Wait after a ring since its Arm reported no ring")
		}
	case <-time.After(hangGuard):
		t.Fatal("a goroutine rung between its Arm and its Wait sleeps: another goroutine's Arm erased the ring")
	}
	n.Exit(0)
}

// TestWriteBesideAWaitLands: PE 0 has one goroutine waiting on its bell
// when another of its goroutines puts to PE 1, which waits for that put
// (Lazy: it stays in flight until the scheduler lands it), and then never
// calls again. The put must land and PE 1 run: the second goroutine's
// call takes PE 0's turn, and its return hands the baton on. The
// scheduler once let such a call run unscheduled: its write stayed in
// flight with nobody to land it (here for good, as the control plane
// never stands still for a round of peer checks), and the world ended in
// a false deadlock or hung.
func TestWriteBesideAWaitLands(t *testing.T) {
	var moves atomic.Uint64
	sig := newTraceAll("wait 0", "wait 1")
	n := New(Config{NPEs: 2, Mode: Lazy, Seed: 1, Trace: sig, Deadlock: ignoreDeadlock,
		Control: func() uint64 { return moves.Add(1) }}) // no check rounds
	b0 := n.Bell(0, transport.NewLocalBell(), make([]byte, 64))
	mem1 := make([]byte, 64)
	b1 := n.Bell(1, transport.NewLocalBell(), mem1)
	pe1Done := make(chan struct{})
	go func() {
		n.Start(1)
		for {
			armed := b1.Arm()
			if mem1[0] != 0 {
				break
			}
			b1.Wait(armed, time.Second)
		}
		n.Exit(1)
		close(pe1Done)
	}()
	n.Start(0)
	var stop atomic.Bool
	aDone := make(chan struct{})
	go func() { // PE 0's waiting goroutine
		for {
			armed := b0.Arm()
			if stop.Load() {
				break
			}
			b0.Wait(armed, time.Second)
		}
		close(aDone)
	}()
	<-sig.seen // both PEs wait
	if err := n.Path(0, 1, false).Put(0, []byte{1}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-pe1Done:
	case <-time.After(hangGuard):
		t.Fatal("PE 1 never saw the put of a goroutine of PE 0 issued while another goroutine of PE 0 waited")
	}
	stop.Store(true)
	b0.Ring()
	select {
	case <-aDone:
	case <-time.After(hangGuard):
		t.Fatal("PE 0's waiting goroutine was not woken by a ring")
	}
	n.Exit(0)
}
