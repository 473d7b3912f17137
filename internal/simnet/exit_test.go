package simnet

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goshmem/shmem/transport"
)

// hangGuard bounds a wait that hangs without the fix under test; it is
// not a timing: what it waits for takes microseconds.
const hangGuard = 30 * time.Second

// traceSignal is a Config.Trace that closes a channel at the first line
// containing want. The scheduler writes its trace under Net.mu, so a
// goroutine that sees the channel closed and then takes Net.mu runs after
// the writer released it: after the writer parked, or returned.
type traceSignal struct {
	want string
	once sync.Once
	seen chan struct{}
}

func newTraceSignal(want string) *traceSignal {
	return &traceSignal{want: want, seen: make(chan struct{})}
}

func (s *traceSignal) Write(b []byte) (int, error) {
	if strings.Contains(string(b), s.want) {
		s.once.Do(func() { close(s.seen) })
	}
	return len(b), nil
}

// ignoreDeadlock is a Config.Deadlock that leaves the world as it is: the
// tests below end their PEs themselves.
func ignoreDeadlock(func(int) bool) {}

// TestExitReleasesParkedGoroutines: a PE's goroutine parked on the bell,
// waiting for the PE's turn, returns when another goroutine of the PE
// ends it (Exit): the PE will never be picked again. It once stayed
// parked for good, and so did the world's runner waiting for it.
func TestExitReleasesParkedGoroutines(t *testing.T) {
	sig := newTraceSignal("wait 0")
	n := New(Config{NPEs: 1, Trace: sig, Deadlock: ignoreDeadlock})
	b := n.Bell(0, transport.NewLocalBell(), make([]byte, 64))
	n.Start(0)
	released := make(chan struct{})
	go func() {
		b.Wait(b.Arm(), 0) // gives the turn up: nothing was written
		close(released)
	}()
	<-sig.seen
	n.Exit(0)
	select {
	case <-released:
	case <-time.After(hangGuard):
		t.Fatal("a goroutine parked for the turn of an ended PE is still parked")
	}
}

// TestEndedWhileOutsideDoesNotRejoin: PE 0's goroutine in an agreement
// (Block) comes back after another goroutine of PE 0 ended it (Exit). It
// must return at once, not wait to rejoin the schedule: picked, PE 0
// would hold the baton with no goroutine left to hand it on. PE 1, which
// holds the baton meanwhile, goes on once it has returned, and then waits
// on its bell for a round of peer checks. It once waited for good.
func TestEndedWhileOutsideDoesNotRejoin(t *testing.T) {
	// With a model the first pick is the lowest rank (every clock is 0).
	n := New(Config{NPEs: 2, Model: &Model{Name: "free"}, Deadlock: ignoreDeadlock})
	b1 := n.Bell(1, transport.NewLocalBell(), make([]byte, 64))
	n.Bell(0, transport.NewLocalBell(), make([]byte, 64))
	back := make(chan struct{})
	pe1Done := make(chan struct{})
	go func() {
		n.Start(1) // runs once PE 0 blocks
		<-back
		b1.Wait(b1.Arm(), 0) // nothing is written: a round of peer checks wakes it
		n.Exit(1)
		close(pe1Done)
	}()
	n.Start(0)
	resume := n.Block(0, "test", 1, 2)
	n.Exit(0)
	go func() {
		resume()
		close(back)
	}()
	select {
	case <-pe1Done:
	case <-time.After(hangGuard):
		t.Fatal("PE 0 ended while outside: its goroutine coming back waits for a turn, and PE 1 for it")
	}
}
