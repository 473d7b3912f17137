package membership

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/memberlist"

	"github.com/goshmem/shmem/internal/errs"
)

// The tests here drive the sealing state machine (step, NotifyMsg before
// sealing, formError) without sockets: peers are set in the view directly
// and messages are handed to NotifyMsg as memberlist would.

// fakeNode is a process named name (start stamp inc) of a world of npes.
func fakeNode(t *testing.T, name string, inc int64, npes int) *node {
	t.Helper()
	log, _ := quietLogger()
	c := DefaultConfig()
	c.JobID, c.Version, c.Secret, c.NPEs, c.Name, c.Logger = "job", "v1", []byte("s"), npes, name, log
	n := newNode(c, inc)
	n.self.Addr = addrOf(name)
	return n
}

func addrOf(name string) string { return fmt.Sprintf("127.0.0.1:%d", 1000+int(name[0])) }

// see puts a peer into n's view, as NotifyJoin would.
func see(n *node, name string, inc int64) {
	n.peers[name] = candidate{Name: name, Addr: addrOf(name), Hdr: header{
		Hint: noHint, NPEs: n.cfg.NPEs, Incarnation: inc, JobID: n.cfg.JobID, Version: n.cfg.Version}}
}

// deliverTo hands m to n as a memberlist user message.
func deliverTo(n *node, m msg) { n.NotifyMsg(m.encode(nil)) }

func TestStepFollowerReportsToLeader(t *testing.T) {
	n := fakeNode(t, "b", 2, 3)
	see(n, "a", 1)
	if res := n.step(true); len(res.sends) != 0 || res.done {
		t.Fatalf("incomplete view: %+v", res)
	}
	see(n, "c", 3)
	res := n.step(false)
	if len(res.sends) != 1 || res.done || res.publish {
		t.Fatalf("first complete view: %+v, want one report", res)
	}
	r := res.sends[0]
	if r.name != "a" || r.addr != addrOf("a") || r.m.Kind != kindReport || r.m.Hash != n.current || r.m.From != "b" {
		t.Fatalf("report %+v, want the table hash to leader a", r)
	}
	if res := n.step(false); len(res.sends) != 0 {
		t.Fatalf("unchanged view without resend: %+v", res)
	}
	again := n.step(true)
	if len(again.sends) != 1 || again.sends[0].m.Seq <= r.m.Seq {
		t.Fatalf("resend: %+v, want one report with a higher sequence number", again)
	}
}

func TestStepLeaderSealsOnAllReports(t *testing.T) {
	n := fakeNode(t, "a", 1, 3)
	see(n, "b", 2)
	see(n, "c", 3)
	res := n.step(false)
	if res.done || len(res.sends) != 0 {
		t.Fatalf("leader without reports: %+v", res)
	}
	h := n.current
	deliverTo(n, msg{Kind: kindReport, Seq: 1, Hash: h, From: "b", Addr: addrOf("b")})
	var other [32]byte
	other[0] = 1
	deliverTo(n, msg{Kind: kindReport, Seq: 5, Hash: other, From: "c", Addr: addrOf("c")})
	if res := n.step(false); res.done {
		t.Fatal("sealed although c reported another table")
	}
	// A report older than one already held (streams may be reordered) is ignored.
	deliverTo(n, msg{Kind: kindReport, Seq: 4, Hash: h, From: "c", Addr: addrOf("c")})
	if res := n.step(false); res.done {
		t.Fatal("sealed on a stale report")
	}
	deliverTo(n, msg{Kind: kindReport, Seq: 6, Hash: h, From: "c", Addr: addrOf("c")})
	res = n.step(false)
	if !res.done || !res.publish || len(res.sends) != 2 {
		t.Fatalf("all reported: %+v, want sealed with two seal messages", res)
	}
	for _, s := range res.sends {
		if s.m.Kind != kindSeal || s.m.Hash != h || s.addr != addrOf(s.name) {
			t.Fatalf("seal message %+v", s)
		}
	}
	if !n.sealed || !n.self.Hdr.Sealed || n.self.Hdr.Hash != h || names(n.table) != "a b c" {
		t.Fatalf("leader state after sealing: sealed %v, header %v, table %s", n.sealed, n.self.Hdr.Sealed, names(n.table))
	}
}

func TestStepWorldOfOneSealsAtOnce(t *testing.T) {
	n := fakeNode(t, "a", 1, 1)
	if res := n.step(false); !res.done || len(res.sends) != 0 {
		t.Fatalf("world of one: %+v", res)
	}
}

func TestStepFollowerAdoptsSeal(t *testing.T) {
	n := fakeNode(t, "b", 2, 3)
	see(n, "a", 1)
	see(n, "c", 3)
	n.step(false)
	h := n.current
	var unknown [32]byte
	unknown[0] = 9
	deliverTo(n, msg{Kind: kindSeal, Seq: 1, Hash: unknown, From: "a", Addr: addrOf("a")})
	if res := n.step(false); res.done {
		t.Fatal("adopted a table it never computed")
	}
	deliverTo(n, msg{Kind: kindSeal, Seq: 2, Hash: h, From: "z", Addr: addrOf("z")})
	if res := n.step(false); res.done {
		t.Fatal("adopted a seal from a process outside the table")
	}
	deliverTo(n, msg{Kind: kindSeal, Seq: 3, Hash: h, From: "a", Addr: addrOf("a")})
	res := n.step(false)
	if !res.done || !res.publish || len(res.sends) != 0 {
		t.Fatalf("seal from the leader: %+v, want sealed", res)
	}
	if n.rankOf["b"] != 1 || n.self.Hdr.Hash != h {
		t.Fatalf("rank %d, hash %x", n.rankOf["b"], n.self.Hdr.Hash[:4])
	}
}

func TestStepAdoptsGossipedSeal(t *testing.T) {
	n := fakeNode(t, "c", 3, 3)
	see(n, "a", 1)
	see(n, "b", 2)
	n.step(false)
	p := n.peers["b"]
	p.Hdr.Sealed, p.Hdr.Hash = true, n.current
	n.peers["b"] = p
	if res := n.step(false); !res.done {
		t.Fatalf("a member's sealed header with our hash: %+v, want sealed", res)
	}
}

// TestStepTableChangeReportsBoth: a process that started earlier is
// discovered late (more processes than npes run), which changes the table
// and its leader; the member reports to the new leader and tells the old.
func TestStepTableChangeReportsBoth(t *testing.T) {
	n := fakeNode(t, "c", 3, 3)
	see(n, "b", 2)
	see(n, "d", 4)
	if res := n.step(false); len(res.sends) != 1 || res.sends[0].name != "b" {
		t.Fatalf("first table: %+v, want a report to b", res)
	}
	see(n, "a", 1) // earlier than d: the table becomes a b c, led by a
	res := n.step(false)
	var to []string
	for _, s := range res.sends {
		to = append(to, s.name)
	}
	if strings.Join(to, " ") != "b a" {
		t.Fatalf("reports went to %v, want the old leader b and the new leader a", to)
	}
}

func TestStepRefusesLatecomer(t *testing.T) {
	n := fakeNode(t, "z", 9, 2)
	see(n, "a", 1)
	see(n, "b", 2)
	res := n.step(false)
	// Ranks are zero-based: the third process would be PE 2.
	if !errors.Is(res.err, errs.ErrBootstrap) || !strings.Contains(res.err.Error(), "world full") ||
		!strings.Contains(res.err.Error(), "would be PE 2, and the world has 2 PEs (ranks 0..1)") {
		t.Fatalf("third process of a world of two: %v", res.err)
	}
}

func TestFormErrorIncompleteView(t *testing.T) {
	n := fakeNode(t, "b", 2, 4)
	see(n, "a", 1)
	n.self.Hdr.Hint = 3
	if err := n.formError(context.DeadlineExceeded); !strings.Contains(err.Error(), "missing 2 (") {
		t.Fatalf("%q: with a peer unhinted, which ranks are missing is not known", err)
	}
	p := n.peers["a"]
	p.Hdr.Hint = 0
	n.peers["a"] = p
	if err := n.formError(context.DeadlineExceeded); !strings.Contains(err.Error(), "missing ranks [1 2]") {
		t.Fatalf("%q does not name the unclaimed hints", err)
	}
	n.self.Hdr.Hint, p.Hdr.Hint = noHint, noHint
	n.peers["a"] = p
	err := n.formError(context.DeadlineExceeded)
	if !errors.Is(err, errs.ErrBootstrap) || !errors.Is(err, errs.ErrTimeout) {
		t.Fatalf("%v: want ErrBootstrap and ErrTimeout", err)
	}
	if !strings.Contains(err.Error(), "saw 2 of 4 processes (a b); missing 2 (ranks follow names") {
		t.Fatalf("%q does not name the count, the processes and the missing ranks", err)
	}
	if err := n.formError(context.Canceled); !errors.Is(err, context.Canceled) || errors.Is(err, errs.ErrTimeout) {
		t.Fatalf("cancelled: %v", err)
	}
}

func TestFormErrorLeaderNamesSilentRanks(t *testing.T) {
	n := fakeNode(t, "a", 1, 4)
	see(n, "b", 2)
	see(n, "c", 3)
	see(n, "d", 4)
	n.step(false)
	deliverTo(n, msg{Kind: kindReport, Seq: 1, Hash: n.current, From: "b", Addr: addrOf("b")})
	var other [32]byte
	deliverTo(n, msg{Kind: kindReport, Seq: 1, Hash: other, From: "c", Addr: addrOf("c")})
	n.down["d"] = true
	n.step(false)
	err := n.formError(context.DeadlineExceeded).Error()
	for _, want := range []string{"saw all 4 processes", "no report from rank 3 (d, dead)", "another table reported by rank 2 (c)"} {
		if !strings.Contains(err, want) {
			t.Errorf("%q does not contain %q", err, want)
		}
	}
	if strings.Contains(err, "rank 1") {
		t.Errorf("%q names rank 1, which reported the table", err)
	}
}

func TestFormErrorFollowerNamesLeader(t *testing.T) {
	n := fakeNode(t, "b", 2, 2)
	see(n, "a", 1)
	n.step(false)
	n.down["a"] = true
	err := n.formError(context.DeadlineExceeded).Error()
	if !strings.Contains(err, "rank 0 (a at "+addrOf("a")) || !strings.Contains(err, "sent no seal") ||
		!strings.Contains(err, "gossip reports dead") {
		t.Fatalf("%q does not name the silent leader", err)
	}
}

// TestLeavingMessageSparesDeparture: a departure that memberlist reports
// without the gossiped Leaving mark (the mark came only through a relay,
// or not at all) is not a failure when the member said directly that it
// leaves; said about another table, or not said, it is.
func TestLeavingMessageSparesDeparture(t *testing.T) {
	n := fakeNode(t, "a", 1, 4)
	for i, name := range []string{"b", "c", "d"} {
		see(n, name, int64(i+2))
	}
	cands := []candidate{n.self}
	for _, c := range n.peers {
		cands = append(cands, c)
	}
	n.mu.Lock()
	n.sealLocked(assignRanks(selectMembers(cands, 4)))
	hash := n.self.Hdr.Hash
	n.mu.Unlock()
	deliverTo(n, msg{Kind: kindLeaving, Seq: 1, Hash: hash, From: "b", Addr: addrOf("b")})
	other := hash
	other[0] ^= 1
	deliverTo(n, msg{Kind: kindLeaving, Seq: 1, Hash: other, From: "c", Addr: addrOf("c")})
	hdr := n.peers["b"].Hdr
	unmarked := hdr.encode(nil)
	for _, name := range []string{"b", "c", "d"} {
		n.NotifyLeave(&memberlist.Node{Name: name, Meta: unmarked})
	}
	var got []string
	for len(n.failures) > 0 {
		got = append(got, n.table[<-n.failures].Name)
	}
	slices.Sort(got)
	if strings.Join(got, ",") != "c,d" {
		t.Fatalf("reported %v, want c and d (b said it leaves; c said so about another table)", got)
	}
}
