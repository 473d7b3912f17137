package world

import (
	"log/slog"
	"os/exec"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/goshmem/shmem/actors"
	"github.com/goshmem/shmem/internal/actorsys"
	"github.com/goshmem/shmem/internal/core"
	"github.com/goshmem/shmem/internal/world/internal/lane"
)

// hangGuard bounds a wait for what takes microseconds, or abortGrace.
const hangGuard = 30 * time.Second

// startedControl is the control of running PE me whose actor sends the
// rank of every failure notice it gets to the channel returned.
func startedControl(t *testing.T, me int) (*control, <-chan int) {
	t.Helper()
	sys := actorsys.NewSystem(nil)
	t.Cleanup(sys.Shutdown)
	got := make(chan int, 8)
	if _, err := sys.Root.SpawnNamed(actor.PropsFromFunc(func(ctx actor.Context) {
		if m, ok := ctx.Message().(*actors.PEFailed); ok {
			got <- m.Rank
		}
	}), core.PEActor(me)); err != nil {
		t.Fatal(err)
	}
	return &control{sys: sys, rank: me, started: true}, got
}

func nextNotice(t *testing.T, got <-chan int) int {
	t.Helper()
	select {
	case r := <-got:
		return r
	case <-time.After(hangGuard):
		t.Fatal("no failure notice reached the PE")
		return -1
	}
}

// TestAbortWaitsForItsCause: a running PE hears that PE 2 closed after
// a failure of its own (its Init failed) before it finds PE 0, whose
// kill made PE 2 fail, gone: its actor hears of PE 0 first, so that its
// operations name PE 0. The cause may be a link's end found later, or a
// same-host process found ended; with no cause found, the abort is
// delivered all the same.
func TestAbortWaitsForItsCause(t *testing.T) {
	abort := "lost the control link to PE 2 at 127.0.0.1:1: " + lane.AbortReason
	t.Run("link end", func(t *testing.T) {
		c, got := startedControl(t, 1)
		c.detected(2, abort)
		c.detected(0, "lost the control link to PE 0 at 127.0.0.1:2: connection closed by the peer")
		if first, second := nextNotice(t, got), nextNotice(t, got); first != 0 || second != 2 {
			t.Fatalf("notices of PEs %d then %d, want 0 then 2", first, second)
		}
	})
	t.Run("ended process", func(t *testing.T) {
		c, got := startedControl(t, 1)
		c.setEnded(func() (int, string, bool) { return 0, "its process (pid 7) has ended", true })
		c.detected(2, abort)
		if first, second := nextNotice(t, got), nextNotice(t, got); first != 0 || second != 2 {
			t.Fatalf("notices of PEs %d then %d, want 0 then 2", first, second)
		}
	})
	t.Run("no cause", func(t *testing.T) {
		c, got := startedControl(t, 1)
		c.detected(2, abort)
		if r := nextNotice(t, got); r != 2 {
			t.Fatalf("notice of PE %d, want 2", r)
		}
	})
}

// TestEndedProcessSkipsAborted: a same-host PE that closed after a failure
// of its own has ended too, but the cause is the other ended process.
func TestEndedProcessSkipsAborted(t *testing.T) {
	ended := func() int {
		cmd := exec.Command("true")
		if err := cmd.Run(); err != nil {
			t.Skipf("no process to end: %v", err)
		}
		return cmd.Process.Pid
	}
	j := &joiner{cfg: Config{Rank: 1}, hostID: "h", ctl: &control{},
		recs: []record{{Rank: 0, Host: "h", PID: ended()}, {Rank: 1, Host: "h"}, {Rank: 2, Host: "h", PID: ended()}}}
	j.ctl.loss.add(0, "lost the control link to PE 0 at 127.0.0.1:1: "+lane.AbortReason)
	if r, ok := j.endedProcess(); !ok || r != 2 {
		t.Fatalf("endedProcess = %d, %v; want PE 2 (PE 0 aborted)", r, ok)
	}
}

// TestGossipWaitsForTheLaneWhileFinalizing: gossip reports become failure
// notices until this PE finalizes, and not after, when a peer's departure
// can overtake rank 0's answer on the lane.
func TestGossipWaitsForTheLaneWhileFinalizing(t *testing.T) {
	c, got := startedControl(t, 0)
	c.log = slog.New(slog.DiscardHandler)
	reports := make(chan int, 4)
	reports <- 1
	reports <- 7 // not a rank of this world: ignored
	close(reports)
	c.watchGossip(reports, 4)
	if r := nextNotice(t, got); r != 1 {
		t.Fatalf("notice for PE %d, want 1", r)
	}
	c.finalizing.Store(true)
	reports = make(chan int, 1)
	reports <- 2
	close(reports)
	c.watchGossip(reports, 4)
	// Notices from one sender arrive in order: had the report for PE 2
	// become one, it would come before this lane loss.
	c.detected(3, "lost the control link to PE 3 at 127.0.0.1:1: connection reset")
	if r := nextNotice(t, got); r != 3 {
		t.Fatalf("notice for PE %d after finalizing began, want only the lane's (PE 3)", r)
	}
}
