package actors

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/goshmem/shmem/internal/datadriven"
)

// TestCoordinatorScenarios drives the coordinator from testdata/gather:
//
//	gather from=<sender> round=<domain>/<seq> rank=<r> members=<a,b,...> [payload=<text>]
//	failed rank=<r> reason=<word>
//	pending
//
// and prints each reply as "to <sender>: <reply>".
func TestCoordinatorScenarios(t *testing.T) {
	var c Coordinator
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
