package simnet

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/goshmem/shmem/transport"
)

// TestGraceRunsFromLastCall: PE 0's goroutine waits for what nothing
// writes while another goroutine of PE 0, which the scheduler does not
// count on, calls now and then from its own code for twice the grace in
// all. The world is still between its calls, but the deadlock is declared
// only Config.Grace after its last call returned, and each of its calls
// stirs the world (Stirs, which the real-time detector reads). The
// scheduler once waited a fixed 300 ms whatever the grace.
func TestGraceRunsFromLastCall(t *testing.T) {
	const (
		grace = 400 * time.Millisecond // more than the old 300 ms
		calls = 12
		every = 50 * time.Millisecond
	)
	declared := make(chan time.Time, 1)
	sig := newTraceSignal("wait 0")
	n := New(Config{NPEs: 1, Trace: sig, Grace: grace,
		Deadlock: func(func(int) bool) { declared <- time.Now() }})
	b := n.Bell(0, transport.NewLocalBell(), make([]byte, 64))
	n.Start(0)
	var stop atomic.Bool
	waiterDone := make(chan struct{})
	go func() { // the goroutine the scheduler counts: blocked on the bell
		for {
			armed := b.Arm()
			if stop.Load() {
				break
			}
			b.Wait(armed, time.Second)
		}
		close(waiterDone)
	}()
	<-sig.seen
	stirs := n.Stirs()
	var last time.Time
	for i := range calls {
		time.Sleep(every)
		select {
		case at := <-declared:
			t.Fatalf("deadlock declared %v after call %d of a goroutine that calls every %v (grace %v)", at.Sub(last), i, every, grace)
		default:
		}
		if err := n.Path(0, 0, false).Put(8, []byte{byte(i + 1)}); err != nil {
			t.Fatal(err)
		}
		last = time.Now()
	}
	if n.Stirs() == stirs {
		t.Error("calls of a goroutine of a PE whose other goroutine is blocked did not stir the world")
	}
	select {
	case at := <-declared:
		if d := at.Sub(last); d < grace {
			t.Errorf("deadlock declared %v after the last call, want at least the grace (%v)", d, grace)
		}
	case <-time.After(hangGuard):
		t.Fatal("no deadlock declared in a world where nothing moves")
	}
	stop.Store(true)
	b.Ring()
	<-waiterDone
	n.Exit(0)
}

// TestNegativeGraceDeclaresNothing: with a negative Config.Grace a world
// where every PE waits arms no deadlock report (sim.WithDeadlockGrace's
// "off"); with a positive one it does.
func TestNegativeGraceDeclaresNothing(t *testing.T) {
	for _, grace := range []time.Duration{-1, time.Hour} {
		sig := newTraceSignal("wait 0")
		n := New(Config{NPEs: 1, Trace: sig, Grace: grace, Deadlock: ignoreDeadlock})
		b := n.Bell(0, transport.NewLocalBell(), make([]byte, 64))
		n.Start(0)
		released := make(chan struct{})
		go func() {
			b.Wait(b.Arm(), 0) // nothing is written: every PE waits
			close(released)
		}()
		<-sig.seen
		n.mu.Lock() // after the waiter's schedule (see traceSignal)
		armed := n.stall != nil
		n.mu.Unlock()
		if armed != (grace > 0) {
			t.Errorf("grace %v: deadlock report armed %v, want %v", grace, armed, grace > 0)
		}
		n.Exit(0)
		<-released
	}
}
