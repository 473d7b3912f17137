package core

import (
	"errors"
	"testing"
	"time"

	"github.com/goshmem/shmem/actors"
	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/pe"
)

// TestWaitNamesFirstFailure: PE 1 records PE 2's failure, then PE 0's (a
// PE that ended its start-up because of PE 2's and closed "after a
// failure of its own"). A wait ends naming PE 2, the first, not the
// lowest rank (the fault suite saw Init name PE 0 so).
func TestWaitNamesFirstFailure(t *testing.T) {
	w := localWorld(t, 3)
	p := w.PEs[1]
	p.s.apply(pe.Failed{Rank: 2, Reason: "killed", Origin: 0})
	p.s.apply(pe.Failed{Rank: 0, Reason: "it closed after a failure of its own", Origin: 1})
	err := p.waitable("Init")
	var e *errs.Error
	if !errors.Is(err, errs.ErrPEFailed) || !errors.As(err, &e) || e.Target != 2 {
		t.Fatalf("wait after PE 2's then PE 0's failure: %v, want ErrPEFailed naming PE 2", err)
	}
}

// TestSettleBlamesFirstFailure: over TCP, a survivor (PE 0) that saw PE
// 2's failure first finalized and dropped its connections; an operation
// of PE 1 under way on its connection to PE 0 fails naming PE 0. Once PE
// 1 has recorded PE 2's failure, settle names PE 2 (the fault suite saw
// "BarrierAll (PE 1 -> PE 0): in Quiet: connection ... lost: EOF").
func TestSettleBlamesFirstFailure(t *testing.T) {
	w := localWorld(t, 3)
	p := w.PEs[1]
	p.s.apply(pe.Failed{Rank: 2, Reason: "lost the control link to PE 2", Origin: 1})
	lost := errs.New("Quiet", 1, 0, errs.ErrPEFailed, "connection to 127.0.0.1:1 lost: EOF")
	err := p.s.settle(lost)
	var e *errs.Error
	if !errors.Is(err, errs.ErrPEFailed) || !errors.As(err, &e) || e.Target != 2 || e.Op != "Quiet" {
		t.Fatalf("settle: %v, want Quiet's ErrPEFailed naming PE 2", err)
	}
	// A connection to the PE that failed first keeps its name.
	own := errs.New("Quiet", 1, 2, errs.ErrPEFailed, "connection lost")
	if err := p.s.settle(own); err != own {
		t.Fatalf("settle of PE 2's own loss: %v, want it unchanged", err)
	}
	// A peer recorded failed in its own right keeps the blame (a PE cut
	// off from every other sees each fail: its operation was to PE 0).
	p.s.apply(pe.Failed{Rank: 0, Reason: "lost the control link to PE 0", Origin: 1})
	if err := p.s.settle(lost); err != lost {
		t.Fatalf("settle of PE 0's loss after PE 0 failed too: %v, want it unchanged", err)
	}
}

// TestSettleEndsOnAnotherFailure: an operation's connection to PE 0 ends
// before PE 1 has heard of PE 2's failure, which made PE 0 finalize and
// leave. settle waits for a GlobalExit notice, but PE 2's failure, once
// recorded, ends that wait at once and takes the blame: waiting on (300
// ms in a 4-host run) let PE 0's own departure be recorded as a failure
// first, and the survivor's error named PE 0. The grace is an hour here,
// so only the recorded failure can end the wait.
func TestSettleEndsOnAnotherFailure(t *testing.T) {
	w := localWorld(t, 3)
	p := w.PEs[1]
	p.s.exitGrace = time.Hour
	lost := errs.New("BarrierAll", 1, 0, errs.ErrPEFailed, "in Atomic: connection to 127.0.0.1:1 lost: EOF")
	done := make(chan error, 1)
	go func() { done <- p.s.settle(lost) }()
	p.s.apply(pe.Failed{Rank: 2, Reason: "lost the control link to PE 2", Origin: 0})
	select {
	case err := <-done:
		var e *errs.Error
		if !errors.Is(err, errs.ErrPEFailed) || !errors.As(err, &e) || e.Target != 2 {
			t.Fatalf("settle: %v, want ErrPEFailed naming PE 2", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("settle still waits a minute after PE 2's failure was recorded")
	}
}

// TestSettleEndsOnLinkLoss: an operation's connection to PE 2 ends,
// and a control link to PE 2 ends without a goodbye: PE 1's own, or PE
// 0's, whose notice PE 1 hears. Every PE that leaves on a GlobalExit
// says goodbye but the caller, which ends only after every other PE has
// gone and whose notice its links carry ahead of their end, so PE 2 did
// not leave on an exit: settle reports its failure at once instead of
// waiting out exitGrace (an hour here) for a notice that will not come.
// Also when a notice without Link came first.
func TestSettleEndsOnLinkLoss(t *testing.T) {
	own := &actors.PEFailed{Rank: 2, Reason: "lost the control link to PE 2", Origin: 1, Link: true}
	flooded := &actors.PEFailed{Rank: 2, Reason: "lost the control link to PE 2", Origin: 0, Link: true}
	gossip := &actors.PEFailed{Rank: 2, Reason: "gossip failure detection", Origin: 1}
	for _, notices := range [][]*actors.PEFailed{{own}, {flooded}, {gossip, own}, {gossip, flooded}} {
		p := localWorld(t, 3).PEs[1]
		p.s.exitGrace = time.Hour
		lost := errs.New("Get", 1, 2, errs.ErrPEFailed, "connection to 127.0.0.1:1 lost: EOF")
		done := make(chan error, 1)
		go func() { done <- p.s.settle(lost) }()
		for _, n := range notices {
			p.s.deliver(n)
		}
		select {
		case err := <-done:
			var e *errs.Error
			if !errors.Is(err, errs.ErrPEFailed) || !errors.As(err, &e) || e.Target != 2 {
				t.Errorf("after %+v: settle: %v, want ErrPEFailed naming PE 2", notices, err)
			}
		case <-time.After(time.Minute):
			t.Fatalf("after %+v: settle still waits a minute after a link to PE 2 ended", notices)
		}
	}
}

// TestGossipLeavesTheExitWait: gossip's verdict follows no exit notice of
// PE 2's (an exiting process ends its gossip without a leave), so it
// leaves settle waiting for one; a link's end does not.
func TestGossipLeavesTheExitWait(t *testing.T) {
	lost := errs.New("Get", 1, 2, errs.ErrPEFailed, "connection to 127.0.0.1:1 lost: EOF")
	for _, c := range []struct {
		f    pe.Failed
		ends bool
	}{
		{pe.Failed{Rank: 2, Reason: "lost the control link to PE 2", Origin: 0, Link: true}, true},
		{pe.Failed{Rank: 2, Reason: "gossip failure detection", Origin: 1}, false},
	} {
		p := localWorld(t, 3).PEs[1]
		p.s.apply(c.f)
		if got := p.s.failureKnown(lost); got != c.ends {
			t.Errorf("after %+v: failureKnown = %v, want %v", c.f, got, c.ends)
		}
	}
}
