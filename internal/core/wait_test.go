package core

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goshmem/shmem/transport"
)

// scriptedBell is a Bell whose every Wait returns at once, reporting a ring
// or a timeout as rung says (or, when set, as ringAt says for the n-th
// Wait, from 1), and counts its Waits and records their timeouts.
type scriptedBell struct {
	transport.Bell
	rung     bool
	ringAt   func(n int32) bool
	waits    atomic.Int32
	mu       sync.Mutex
	timeouts []time.Duration
}

func (b *scriptedBell) Wait(_ uint32, timeout time.Duration) bool {
	n := b.waits.Add(1)
	b.mu.Lock()
	b.timeouts = append(b.timeouts, timeout)
	b.mu.Unlock()
	if b.ringAt != nil {
		return b.ringAt(n)
	}
	return b.rung
}

// TestQuietWaitsSleepLonger: each sleep that times out doubles the next
// one's bound up to quietWakeMax, and a ring brings it back to wakeEvery,
// so a PE idle in a wait wakes a few times a second, not a hundred. The
// wait is Finalize's kind (no peer checks), so only the backstop bounds
// its sleeps.
func TestQuietWaitsSleepLonger(t *testing.T) {
	bell := &scriptedBell{ringAt: func(n int32) bool { return n == 7 }}
	w := newFakeWorldWith(t, 2, func(c *Config) {
		if c.Rank == 0 {
			bell.Bell = c.Bell
			c.Bell = bell
		}
	})
	cond := func() bool { return bell.waits.Load() >= 9 }
	if err := w.pes[0].WaitBlocked("test_wait", groupWait{}, noWord, cond); err != nil {
		t.Fatal(err)
	}
	ms := time.Millisecond
	want := []time.Duration{10 * ms, 20 * ms, 40 * ms, 80 * ms, 160 * ms, 160 * ms, 160 * ms, 10 * ms, 20 * ms}
	bell.mu.Lock()
	defer bell.mu.Unlock()
	if !slices.Equal(bell.timeouts, want) {
		t.Errorf("sleep bounds %v, want %v", bell.timeouts, want)
	}
}

// TestWaitPollsOnlyAfterARing: a wait polls for Spin after a sleep that a
// ring ended, and only checks once more after one that timed out, so a PE
// that waits long does not burn a core every backstop wake-up.
func TestWaitPollsOnlyAfterARing(t *testing.T) {
	for _, rung := range []bool{false, true} {
		bell := &scriptedBell{rung: rung}
		w := newFakeWorldWith(t, 2, func(c *Config) {
			if c.Rank == 0 {
				bell.Bell = c.Bell
				c.Bell = bell
				c.Spin = 10 * time.Millisecond
			}
		})
		// Count the checks between the first Wait's return and the third's:
		// after a ring each poll spins (at least 64 checks past the tight
		// ones before it first looks at the clock), after a timeout not.
		var between atomic.Int32
		cond := func() bool {
			switch n := bell.waits.Load(); {
			case n == 0:
				return false
			case n < 3:
				between.Add(1)
				return false
			default:
				return true
			}
		}
		if err := w.pes[0].WaitLocal("test_wait", cond); err != nil {
			t.Fatal(err)
		}
		got, limit := int(between.Load()), 2*(tightChecks+1)
		if rung && got <= limit {
			t.Errorf("after rings: %d checks between the sleeps, want a poll (> %d)", got, limit)
		}
		if !rung && got > limit {
			t.Errorf("after timeouts: %d checks between the sleeps, want at most %d", got, limit)
		}
	}
}

// syncCountingBell is a Bell that can arm sync waiters, and counts how
// each kind of arming was asked for.
type syncCountingBell struct {
	transport.Bell
	arms, syncArms atomic.Int32
}

func (b *syncCountingBell) Arm() uint32 { b.arms.Add(1); return b.Bell.Arm() }
func (b *syncCountingBell) ArmSync() uint32 {
	b.syncArms.Add(1)
	return b.Bell.Arm()
}
func (b *syncCountingBell) DisarmSync() { b.Bell.Disarm() }

// stillBlocked is a team operation for WaitBlocked that can always still
// complete.
type stillBlocked struct{}

func (stillBlocked) CheckPeers(string) error { return nil }
func (stillBlocked) Waiting() string         { return "a test's word" }

// TestTeamWaitsArmForSignalsOnly: a team operation's wait arms with
// ArmSync where the bell offers it (plain puts into the heap then do not
// wake it: udma.TestPlainPutsSkipSyncWaiters), and a word wait with Arm.
func TestTeamWaitsArmForSignalsOnly(t *testing.T) {
	bell := &syncCountingBell{}
	w := newFakeWorldWith(t, 2, func(c *Config) {
		if c.Rank == 0 {
			bell.Bell = c.Bell
			c.Bell = bell
		}
	})
	p := w.pes[0]
	for _, team := range []bool{true, false} {
		var done atomic.Bool
		cond := func() bool { return done.Load() }
		arms, syncArms := bell.arms.Load(), bell.syncArms.Load()
		errc := make(chan error, 1)
		go func() {
			if team {
				errc <- p.WaitBlocked("test_team_wait", stillBlocked{}, noWord, cond)
			} else {
				errc <- p.WaitLocal("test_word_wait", cond)
			}
		}()
		for bell.arms.Load() == arms && bell.syncArms.Load() == syncArms {
			runtime.Gosched() // until the wait has armed
		}
		gotSync := bell.syncArms.Load() != syncArms
		done.Store(true)
		bell.Ring()
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
		if gotSync != team {
			t.Errorf("team wait %v: armed with ArmSync %v", team, gotSync)
		}
	}
}

// TestWaitsOnOneWordArmForIt: on a bell that tells word waiters apart
// (transport.LocalBell) a wait whose condition reads one word (WaitWord, a
// team operation's WaitBlocked) arms for that word, so writes elsewhere do
// not wake it; a vector wait, or one whose word is not known, arms for any
// write.
func TestWaitsOnOneWordArmForIt(t *testing.T) {
	bell := transport.NewLocalBell()
	w := newFakeWorldWith(t, 2, func(c *Config) {
		if c.Rank == 0 {
			c.Bell = bell
		}
	})
	p := w.pes[0]
	cases := []struct {
		name   string
		wait   func(cond func() bool) error
		onWord bool
	}{
		{"team wait on word 64", func(c func() bool) error { return p.WaitBlocked("test_team_wait", stillBlocked{}, 64, c) }, true},
		{"team wait, word unknown", func(c func() bool) error { return p.WaitBlocked("test_team_wait", stillBlocked{}, noWord, c) }, false},
		{"WaitWord 64", func(c func() bool) error { return p.WaitWord(context.Background(), "test_word_wait", 64, c) }, true},
		{"WaitVector from 64", func(c func() bool) error { return p.WaitVector(context.Background(), "test_vector_wait", 64, c) }, false},
	}
	for _, c := range cases {
		var done atomic.Bool
		errc := make(chan error, 1)
		go func() { errc <- c.wait(done.Load) }()
		for !bell.Armed() {
			runtime.Gosched() // until the wait has armed
		}
		if rang := bell.RingRange(128, 136); rang == c.onWord {
			t.Errorf("%s: a write of [128, 136) rang %v", c.name, rang)
		}
		done.Store(true)
		bell.RingRange(64, 72) // ends the wait
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
}

// TestTestLoopNaps: a PE with network paths whose Test forms miss in a
// tight loop parks on its bell now and then (freeing its P for the
// network readers, which ring the bell when they land a write), and one
// without network paths never does.
func TestTestLoopNaps(t *testing.T) {
	bell := transport.NewLocalBell()
	w := newFakeWorldWith(t, 2, func(c *Config) {
		if c.Rank == 0 {
			c.Bell = bell
		}
	})
	p := w.pes[0]
	for i := 0; i < 100*testNapEvery; i++ {
		p.Missed()
	}
	if n := p.s.tests.naps.Load(); n != 0 {
		t.Fatalf("a PE whose paths are all mapped napped %d times", n)
	}
	p.s.tests.networked = true
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stop.Load() {
			p.Missed()
		}
	}()
	for !bell.Armed() {
		runtime.Gosched()
	}
	bell.Ring()
	stop.Store(true)
	<-done
	if p.s.tests.naps.Load() == 0 {
		t.Fatal("the bell was armed, but no nap was counted")
	}
}
