package actors

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/goshmem/shmem/internal/datadriven"
)

// TestCoordinatorScenarios drives a coordinator of a world of 4 from
// testdata/gather:
//
//	gather from=<sender> round=<domain>/<seq> rank=<r> members=<a,b,...> [payload=<text>]
//	failed rank=<r> reason=<word>
//	pending
//
// and prints each reply as "to <sender>: <reply>".
func TestCoordinatorScenarios(t *testing.T) {
	c := Coordinator{NPEs: 4}
	datadriven.RunFile(t, "testdata/gather", func(t *testing.T, d *datadriven.Case) string {
		arg := func(k string) string {
			v, ok := d.Arg(k)
			if !ok {
				t.Fatalf("%s: missing %s=", d.Pos, k)
			}
			return v
		}
		atoi := func(k string) int {
			n, err := strconv.Atoi(arg(k))
			if err != nil {
				t.Fatalf("%s: %s: %v", d.Pos, k, err)
			}
			return n
		}
		var replies []Reply
		switch d.Cmd {
		case "gather":
			round := arg("round")
			i := strings.LastIndex(round, "/")
			domain, seq := round[:max(i, 0)], round[i+1:]
			s, err := strconv.ParseUint(seq, 10, 64)
			if err != nil {
				t.Fatalf("%s: round: %v", d.Pos, err)
			}
			var members []int
			for _, f := range strings.Split(arg("members"), ",") {
				m, err := strconv.Atoi(f)
				if err != nil {
					t.Fatalf("%s: members: %v", d.Pos, err)
				}
				members = append(members, m)
			}
			payload, _ := d.Arg("payload")
			g := &Gather{Domain: domain, Seq: s, Rank: atoi("rank"), N: len(members), Members: members, Payload: []byte(payload)}
			var from any
			if f, _ := d.Arg("from"); f != "" {
				from = f
			}
			replies = c.Step(from, g)
		case "failed":
			replies = c.Step(nil, &PEFailed{Rank: atoi("rank"), Reason: arg("reason")})
		case "pending":
			return fmt.Sprintf("%d rounds pending", c.Pending())
		default:
			t.Fatalf("%s: unknown command %s", d.Pos, d.Cmd)
		}
		if len(replies) == 0 {
			return "no replies"
		}
		var b strings.Builder
		for _, r := range replies {
			fmt.Fprintf(&b, "to %v: %s\n", r.To, describe(r.Msg))
		}
		return b.String()
	})
}

func describe(r *GatherReply) string {
	if r.Err != "" {
		return fmt.Sprintf("abort failed=%d err=%q", r.Failed, r.Err)
	}
	parts := make([]string, len(r.Payloads))
	for i, p := range r.Payloads {
		parts[i] = string(p)
	}
	return "payloads [" + strings.Join(parts, " ") + "]"
}

// TestCoordinatorBoundsOpenRounds: an insider's Gathers (they pass Decode,
// as the control lane checks them) claiming huge groups (100,000 members in
// a world of 4) open no round, and
// rounds that never complete are refused once the open ones hold
// openSlots(NPEs) group slots or maxOpenPayload bytes: the coordinator's
// memory stays bounded whatever arrives (40 Gathers of 900,000 members,
// 34 MB on the wire, grew the heap by 1.6 GB before); a round of the world
// still completes once the flood's rounds are aborted.
func TestCoordinatorBoundsOpenRounds(t *testing.T) {
	const npes = 4
	c := Coordinator{NPEs: npes}
	members := make([]int, 100_000)
	for i := range members {
		members[i] = i % 100
	}
	step := func(from string, g *Gather) []Reply {
		b, err := Encode(g)
		if err != nil {
			t.Fatal(err)
		}
		m, err := Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		return c.Step(from, m)
	}
	for seq := range 4 {
		r := step("insider", &Gather{Domain: "x", Seq: uint64(seq), Rank: 1, N: len(members), Members: members})
		if len(r) != 1 || r[0].To != "insider" || !strings.Contains(r[0].Msg.Err, "a group of 100000 in a world of 4") {
			t.Fatalf("huge group: replies %v", r)
		}
	}
	if c.Pending() != 0 {
		t.Fatalf("%d rounds opened by huge groups", c.Pending())
	}
	// Rounds of the whole world that never complete: only as many open
	// as the slots allow.
	world := []int{0, 1, 2, 3}
	refused := 0
	for seq := range 2 * openSlots(npes) / npes {
		r := step("insider", &Gather{Domain: "y", Seq: uint64(seq), Rank: 1, N: npes, Members: world})
		if len(r) == 1 && strings.Contains(r[0].Msg.Err, "too many rounds that never complete") {
			refused++
		} else if len(r) != 0 {
			t.Fatalf("round %d: replies %v", seq, r)
		}
	}
	if max := openSlots(npes) / npes; c.Pending() != max || refused != max {
		t.Fatalf("%d rounds open, %d refused; want %d and %d", c.Pending(), refused, max, max)
	}
	// Payload bytes: few rounds, large payloads.
	var d Coordinator
	d.NPEs = npes
	big := make([]byte, 512<<10)
	held := 0
	for seq := 0; held <= maxOpenPayload; seq++ {
		r := d.Step("insider", &Gather{Domain: "z", Seq: uint64(seq), Rank: 0, N: 2, Members: []int{0, 1}, Payload: big})
		if len(r) == 1 && strings.Contains(r[0].Msg.Err, "bytes of payloads") {
			break
		}
		held += len(big)
	}
	if held > maxOpenPayload {
		t.Fatalf("open rounds hold %d payload bytes, bound %d", held, maxOpenPayload)
	}
	// The failure of a member aborts the stuck rounds and frees them: the
	// world's own round then completes.
	c.Step(nil, &PEFailed{Rank: 3, Reason: "gone"})
	if c.Pending() != 0 {
		t.Fatalf("%d rounds still open after their member failed", c.Pending())
	}
	var got []Reply
	for r := range 3 {
		got = step(fmt.Sprint("p", r), &Gather{Domain: "ok", Seq: 1, Rank: r, N: 3, Members: []int{0, 1, 2}, Payload: []byte{byte(r)}})
	}
	if len(got) != 3 || got[0].Msg.Err != "" {
		t.Fatalf("a round after the flood: %v", got)
	}
}
