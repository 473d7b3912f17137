package pe

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/goshmem/shmem/actors"
	"github.com/goshmem/shmem/internal/datadriven"
)

// TestScenarios drives PE actors from the files in testdata/:
//
//	new rank=<r> npes=<n>
//	failed rank=<r> reason=<word> origin=<o> [link=true]
//	exit rank=<r> status=<s>
//
// and prints the effects of each message, one a line.
func TestScenarios(t *testing.T) {
	for _, file := range []string{"testdata/failure", "testdata/exit"} {
		t.Run(file, func(t *testing.T) {
			var a *Actor
			datadriven.RunFile(t, file, func(t *testing.T, d *datadriven.Case) string {
				num := func(k string) int {
					v, _ := d.Arg(k)
					n, err := strconv.Atoi(v)
					if err != nil {
						t.Fatalf("%s: %s=%q: %v", d.Pos, k, v, err)
					}
					return n
				}
				var effects []any
				switch d.Cmd {
				case "new":
					a = New(num("rank"), num("npes"))
					return ""
				case "failed":
					reason, _ := d.Arg("reason")
					link, _ := d.Arg("link")
					effects = a.Step(&actors.PEFailed{Rank: num("rank"), Reason: reason, Origin: num("origin"), Link: link == "true"})
				case "exit":
					effects = a.Step(&actors.GlobalExit{Rank: num("rank"), Status: num("status")})
				default:
					t.Fatalf("%s: unknown command %s", d.Pos, d.Cmd)
				}
				if len(effects) == 0 {
					return "no effects"
				}
				var b strings.Builder
				for _, e := range effects {
					if s, ok := e.(Send); ok {
						fmt.Fprintf(&b, "send to %d: %T%+v\n", s.To, s.Msg, s.Msg)
						continue
					}
					fmt.Fprintf(&b, "%T%+v\n", e, e)
				}
				return b.String()
			})
		})
	}
}
