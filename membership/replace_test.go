package membership

import (
	"net"
	"testing"

	"github.com/hashicorp/memberlist"
)

// TestDeadCandidateGivesWay: a process killed before the table was sealed
// kept its place in every table, and the process restarted in its place
// was refused as one too many ("the world is full: 2 of 2 PEs started
// before it"), so no table could seal and every process timed out. A dead
// candidate now gives way to a live one, and holds its place only while
// nobody can take it (memberlist's false deaths on a loaded host).
func TestDeadCandidateGivesWay(t *testing.T) {
	n := fakeNode(t, "a", 1, 2)
	see(n, "b", 2)
	n.step(false)
	n.down["b"] = true
	if res := n.step(false); res.err != nil || len(n.history[n.current]) != 2 || n.leader.Name != "a" {
		t.Fatalf("with nobody to replace it, b left the table: %+v", res)
	}
	h := header{Hint: noHint, NPEs: 2, Incarnation: 3, JobID: n.cfg.JobID, Version: n.cfg.Version}
	if err := n.NotifyAlive(&memberlist.Node{Name: "c", Addr: net.IPv4(127, 0, 0, 1), Port: 1099, Meta: h.encode(nil)}); err != nil {
		t.Fatalf("the process restarted in b's place was refused: %v", err)
	}
	see(n, "c", 3)
	n.step(false)
	if got := names(n.history[n.current]); got != "a c" {
		t.Fatalf("table %q, want a c: the dead b gives way to the live c", got)
	}
	// b refutes its death: the earlier process takes its place back.
	delete(n.down, "b")
	n.step(false)
	if got := names(n.history[n.current]); got != "a b" {
		t.Fatalf("table %q, want a b once b is alive again", got)
	}
}

// TestRestartedProcessDoesNotRefuseItself: the restarted process's own
// view holds the dead one (gossiped before it was declared dead); once
// memberlist declares it, the restarted one no longer counts it.
func TestRestartedProcessDoesNotRefuseItself(t *testing.T) {
	n := fakeNode(t, "c", 3, 2)
	see(n, "a", 1)
	see(n, "b", 2)
	n.down["b"] = true
	if res := n.step(false); res.err != nil {
		t.Fatalf("refused itself for a dead process: %v", res.err)
	}
	if got := names(n.history[n.current]); got != "a c" {
		t.Fatalf("table %q, want a c", got)
	}
}
