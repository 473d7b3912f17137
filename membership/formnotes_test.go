package membership

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"
)

// TestFormErrorNamesRefusedProcesses: a process of the job started with
// another world size is refused; the others' Form error named only the
// count seen ("saw 3 of 4"), the cause being in a log line. It now names
// the process, its address and the reason.
func TestFormErrorNamesRefusedProcesses(t *testing.T) {
	n := fakeNode(t, "a", 1, 2)
	h := header{Hint: noHint, NPEs: 3, Incarnation: 2, JobID: n.cfg.JobID, Version: n.cfg.Version}
	x := &memberlist.Node{Name: "x", Addr: net.IPv4(127, 0, 0, 1), Port: 4242, Meta: h.encode(nil)}
	if err := n.NotifyAlive(x); err == nil {
		t.Fatal("a process expecting 3 PEs was admitted to a world of 2")
	}
	err := n.formError(context.DeadlineExceeded).Error()
	if want := "refused x at 127.0.0.1:4242 (it expects 3 PEs, this job has 2)"; !strings.Contains(err, want) {
		t.Fatalf("%q does not contain %q", err, want)
	}
}

// TestFormErrorFollowerNamesDeadMember: a member killed before the table
// was sealed keeps its place in the table, so the leader never seals; a
// follower's error blamed only the leader ("sent no seal"). It now names
// the member gossip reports dead.
func TestFormErrorFollowerNamesDeadMember(t *testing.T) {
	n := fakeNode(t, "b", 2, 3)
	see(n, "a", 1)
	see(n, "c", 3)
	n.step(false)
	n.down["c"] = true
	err := n.formError(context.DeadlineExceeded).Error()
	if want := "gossip reports dead rank 2 (c at " + addrOf("c") + ")"; !strings.Contains(err, want) {
		t.Fatalf("%q does not contain %q", err, want)
	}
}

// TestFormErrorNamesUnreachableSeed: a process whose only seed never
// answers (not started, another program on its port, a firewall) said
// only "saw 1 of 2 processes"; it now names the seed and why the join
// failed.
func TestFormErrorNamesUnreachableSeed(t *testing.T) {
	t.Parallel()
	log, _ := quietLogger()
	cfg := job(t, 2, 2, log)[1] // its seeds are reserved, never bound
	cfg.Seeds = cfg.Seeds[:1]
	cfg.FormTimeout = 500 * time.Millisecond
	_, err := Form(context.Background(), cfg)
	if err == nil {
		t.Fatal("formed a world of 2 alone")
	}
	want := "no join with a seed (" + cfg.Seeds[0] + ") or peer succeeded, the last: "
	if !strings.Contains(err.Error(), want+"failed to join "+cfg.Seeds[0]+": ") ||
		!strings.Contains(err.Error(), "connection refused") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("%q does not name the seed and the refused connection", err)
	}
}
