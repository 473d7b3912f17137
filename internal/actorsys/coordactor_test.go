package actorsys

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/goshmem/shmem/actors"
	"github.com/goshmem/shmem/internal/errs"
)

// TestCoordinatorActor: the coordinator's actor serves a round whose
// members send decoded Gathers (as the control lane delivers them), and
// aborts a round when a PEFailed arrives.
func TestCoordinatorActor(t *testing.T) {
	sys := NewSystem(nil)
	defer sys.Shutdown()
	coord := sys.Root.Spawn(NewCoordinator(func() int { return 2 }))
	const timeout = time.Minute // a hang guard: the round completes at once
	decoded := sys.Root.RequestFuture(coord, &actors.Gather{Domain: "d", Seq: 1, Rank: 0, N: 2, Members: []int{0, 1}, Payload: []byte("a")}, timeout)
	all, err := RunGather(sys.Root, coord, &actors.Gather{Domain: "d", Seq: 1, Rank: 1, N: 2, Members: []int{0, 1}, Payload: []byte("b")}, timeout, "Test", 1)
	if err != nil || len(all) != 2 || string(all[0]) != "a" || string(all[1]) != "b" {
		t.Fatalf("RunGather = %q, %v", all, err)
	}
	res, err := decoded.Result()
	if err != nil {
		t.Fatal(err)
	}
	reply, ok := res.(*actors.GatherReply)
	if !ok || len(reply.Payloads) != 2 || string(reply.Payloads[0]) != "a" || string(reply.Payloads[1]) != "b" {
		t.Fatalf("decoded member got %#v", res)
	}

	pending := sys.Root.RequestFuture(coord, &actors.Gather{Domain: "d", Seq: 2, Rank: 0, N: 2, Members: []int{0, 1}}, timeout)
	sys.Root.Send(coord, &actors.PEFailed{Rank: 1, Reason: "test"})
	res, err = pending.Result()
	if err != nil {
		t.Fatal(err)
	}
	_, err = Result(res.(*actors.GatherReply), 2, "Test", 0)
	var e *errs.Error
	if !errors.Is(err, errs.ErrPEFailed) || !errors.As(err, &e) || e.Target != 1 {
		t.Fatalf("aborted round: %v, want ErrPEFailed naming PE 1", err)
	}
	// The reply's "PE failed: <reason>" is said once in the error.
	if msg := err.Error(); strings.Count(msg, "PE failed") != 1 || !strings.Contains(msg, "test") {
		t.Fatalf("aborted round: %q, want the reason and the sentinel once", msg)
	}
}
