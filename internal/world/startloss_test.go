package world

import (
	"testing"

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
