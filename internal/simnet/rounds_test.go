package simnet

import (
	"bytes"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/goshmem/shmem/internal/lag"
	"github.com/goshmem/shmem/transport"
)

// TestEnteredAgreementIsWaitedFor: with both PEs outside in agreements
// and nothing else to run, the scheduler's still timer (stillFor) runs a
// round of peer checks only when an agreement may never end. When both
// are in the same one, it ends however long its goroutines take to come
// back; a round of checks then fell where real time put it, and a seed's
// two runs wrote different traces (TestLockContentionReplays on a loaded
// machine).
func TestEnteredAgreementIsWaitedFor(t *testing.T) {
	for _, tc := range []struct {
		name      string
		pe1Domain string // PE 0 is in round 1 of "gather" among 2 PEs
		wantCheck bool
	}{
		{"both-entered", "gather", false},
		{"other-agreement", "split", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var trace bytes.Buffer // written and read under n.mu
			n := New(Config{NPEs: 2, Model: &Model{Name: "free"}, Trace: &trace, Deadlock: ignoreDeadlock})
			n.Bell(0, transport.NewLocalBell(), make([]byte, 64))
			n.Bell(1, transport.NewLocalBell(), make([]byte, 64))
			type outside struct {
				rank   int
				resume func()
			}
			blocked := make(chan outside, 2)
			go func() {
				n.Start(1) // runs once PE 0 blocks
				blocked <- outside{1, n.Block(1, tc.pe1Domain, 1, 2)}
			}()
			n.Start(0)
			blocked <- outside{0, n.Block(0, "gather", 1, 2)}
			out := []outside{<-blocked, <-blocked}

			n.mu.Lock()
			n.progress++ // as a write that landed would: a round is due
			epoch := n.steps
			n.mu.Unlock()
			n.stillFor(epoch, 0)
			n.mu.Lock()
			checked := strings.Contains(trace.String(), "check round")
			sure := n.roundsSure()
			n.mu.Unlock()
			if checked != tc.wantCheck || sure == tc.wantCheck {
				t.Errorf("check round run %v (want %v), an agreement sure to end %v", checked, tc.wantCheck, sure)
			}

			ended := make(chan struct{}, len(out))
			for _, o := range out {
				go func() {
					o.resume()
					n.Exit(o.rank)
					ended <- struct{}{}
				}()
			}
			for range out {
				select {
				case <-ended:
				case <-time.After(hangGuard):
					t.Fatal("a PE back from its agreement never ran again")
				}
			}
			n.mu.Lock()
			defer n.mu.Unlock()
			if len(n.rounds) != 0 {
				t.Errorf("%d agreements still recorded after every PE came back", len(n.rounds))
			}
		})
	}
}

// TestEndedPELeavesItsAgreements: a PE that ended (Exit) while outside
// in an agreement no longer counts in it, so the agreement cannot hold
// the scheduler's checks off for good.
func TestEndedPELeavesItsAgreements(t *testing.T) {
	n := New(Config{NPEs: 2, Model: &Model{Name: "free"}, Deadlock: ignoreDeadlock})
	n.Bell(0, transport.NewLocalBell(), make([]byte, 64))
	n.Bell(1, transport.NewLocalBell(), make([]byte, 64))
	resumed := make(chan func(), 1)
	go func() {
		n.Start(1)
		resumed <- n.Block(1, "gather", 1, 2)
	}()
	n.Start(0)
	resume0 := n.Block(0, "gather", 1, 2)
	resume1 := <-resumed
	n.Exit(0)
	n.Exit(1)
	n.mu.Lock()
	sure := n.roundsSure()
	n.mu.Unlock()
	if sure {
		t.Error("an agreement whose members all ended still counts as sure to end")
	}
	resume0()
	resume1()
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.rounds) != 0 {
		t.Errorf("%d agreements still recorded after both PEs ended", len(n.rounds))
	}
}

// TestBehindProcessIsNoDeadlock: a world whose every PE waits on its bell
// is declared deadlocked at the end of the grace, unless the process fell
// behind meanwhile (a goroutine waited long to run: one running its own
// code may still call), when the grace starts again.
func TestBehindProcessIsNoDeadlock(t *testing.T) {
	declared := make(chan struct{}, 1)
	sig := newTraceSignal("wait 0")
	n := New(Config{NPEs: 1, Trace: sig, Grace: time.Hour, Deadlock: func(func(int) bool) { declared <- struct{}{} }})
	b := n.Bell(0, transport.NewLocalBell(), make([]byte, 64))
	n.Start(0)
	released := make(chan struct{})
	go func() {
		b.Wait(b.Arm(), 0) // nothing is ever written: the world stands still
		close(released)
	}()
	<-sig.seen

	// Waits to run in seconds: under half an hour, and from half an hour
	// on (over a quarter of the grace).
	slow := &metrics.Float64Histogram{Buckets: []float64{0, 1800, 7200}, Counts: []uint64{0, 0}}
	n.mu.Lock()
	n.lag = lag.NewFrom(time.Hour, func() *metrics.Float64Histogram { return slow })
	n.lag.Behind(time.Now())
	epoch := n.steps
	slow.Counts[1]++ // a goroutine waited that long to run
	n.mu.Unlock()
	n.declareDeadlock(epoch)
	select {
	case <-declared:
		t.Fatal("a deadlock was declared while the process was behind")
	default:
	}
	n.declareDeadlock(epoch) // nothing waited since
	select {
	case <-declared:
	default:
		t.Fatal("no deadlock was declared in a still world")
	}
	n.Exit(0)
	<-released
}
