package world

import (
	"errors"
	"testing"

	"github.com/goshmem/shmem/actors"
	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/internal/world/internal/lane"
)

// TestLossLog: a start-up wait is woken by each new loss, and the cause
// it reports is the first PE that failed for a reason of its own, not a
// PE that closed after a failure of its own (found first, as rank 0
// aborting its Init after PE 2's death often is).
func TestLossLog(t *testing.T) {
	var l lossLog
	if _, _, ok := l.firstCause(); ok {
		t.Fatal("a cause in an empty log")
	}
	woken := l.changed()
	l.add(0, "lost the control link to PE 0: "+lane.AbortReason)
	select {
	case <-woken:
	default:
		t.Fatal("a loss did not wake the waiter")
	}
	if _, _, ok := l.firstCause(); ok {
		t.Fatal("an abort taken for a cause")
	}
	l.add(2, "its process (pid 7) has ended")
	l.add(2, "again")
	if r, why, ok := l.firstCause(); !ok || r != 2 || why != "its process (pid 7) has ended" {
		t.Fatalf("cause = %d %q %v, want PE 2 with its first reason", r, why, ok)
	}
	if why, ok := l.of(0); !ok || why == "" {
		t.Fatal("PE 0's loss not kept")
	}
}

// TestBlameInit: rank 0's coordinator aborted the route agreement on PE
// 1's abort (PE 1 closed after a failure of its own) before it heard of
// PE 2's death, which this PE found: Init names PE 2. An abort with no
// cause found keeps its name, and other errors are untouched.
func TestBlameInit(t *testing.T) {
	j := &joiner{cfg: Config{Rank: 0, HostID: "grouped"}, ctl: &control{}}
	aborted := errs.New("Init", 0, 1, errs.ErrPEFailed, "route agreement aborted: PE failed: lost the control link to PE 1: "+lane.AbortReason)
	if err := j.blameInit(aborted); err != aborted {
		t.Fatalf("no cause known: %v, want the abort unchanged", err)
	}
	j.ctl.loss.add(1, "lost the control link to PE 1: "+lane.AbortReason)
	j.ctl.loss.add(2, "its process (pid 7) ended during start-up")
	var e *errs.Error
	if err := j.blameInit(aborted); !errors.Is(err, errs.ErrPEFailed) || !errors.As(err, &e) || e.Target != 2 || e.Op != "Init" {
		t.Fatalf("with PE 2's death known: %v, want Init's ErrPEFailed naming PE 2", err)
	}
	other := errs.New("Init", 0, 1, errs.ErrPEFailed, "killed")
	if err := j.blameInit(other); err != other {
		t.Fatalf("a failure of its own: %v, want it unchanged", err)
	}
}

// TestRankZeroAbortFoundAfterItsEnd: PE 1, waiting for a start-up round,
// finds rank 0's process ended, then reads rank 0's abort (its Init
// failed on PE 2's death, which PE 1 found too): Init names PE 2, not rank
// 0. The abort is kept although another reason for rank 0 came first, and
// ends the wait for rank 0's answer, which will not come.
func TestRankZeroAbortFoundAfterItsEnd(t *testing.T) {
	j := &joiner{cfg: Config{Rank: 1, HostID: "grouped"}, ctl: &control{}}
	ended := "its process (pid 7) ended during start-up"
	j.ctl.loss.add(0, ended)
	j.ctl.loss.add(2, "lost the control link to PE 2 at 127.0.0.1:1: connection closed by the peer")
	j.ctl.loss.add(0, "lost the control link to PE 0 at 127.0.0.1:2: "+lane.AbortReason)
	if !j.ctl.loss.abortedRank(0) {
		t.Fatal("rank 0's abort, read after its end, was not kept")
	}
	if r, _, ok := j.ctl.loss.firstCause(); !ok || r != 2 {
		t.Fatalf("first cause = PE %d (%v), want PE 2", r, ok)
	}
	_, err := j.rankZeroLost(make(chan *actors.GatherReply), &actors.Gather{Domain: "reach", N: 3}, ended)
	var e *errs.Error
	if !errors.Is(err, errs.ErrPEFailed) || !errors.As(err, &e) || e.Target != 2 {
		t.Fatalf("Init's error: %v, want ErrPEFailed naming PE 2", err)
	}
}
