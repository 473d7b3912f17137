package membership

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/goshmem/shmem/internal/datadriven"
)

// TestSealScenarios drives the sealing state machine (step, and messages
// as NotifyMsg takes them) from the scenario files in testdata/seal:
//
//	node name=b inc=2 npes=3     the process under test
//	see name=a inc=1             a peer joins its view
//	report from=c seq=5 hash=H   a member's report arrives
//	seal from=a seq=1 hash=H     a seal arrives
//	step [resend]                evaluate the view
//	state                        sealed or not, and the table
//
// H is "current" (the table this process computed last) or any other word
// (a table it never computed). Outputs print hashes the same way.
func TestSealScenarios(t *testing.T) {
	for _, f := range []string{"follower", "leader", "adopt", "crowded"} {
		t.Run(f, func(t *testing.T) {
			var n *node
			hashOf := func(word string) [32]byte {
				if word == "current" {
					return n.current
				}
				var h [32]byte
				copy(h[:], word)
				return h
			}
			nameOf := func(h [32]byte) string {
				if h == n.current {
					return "current"
				}
				return "other"
			}
			datadriven.RunFile(t, "testdata/seal/"+f, func(t *testing.T, c *datadriven.Case) string {
				arg := func(k string) string { v, _ := c.Arg(k); return v }
				num := func(k string) int64 { v, _ := strconv.ParseInt(arg(k), 10, 64); return v }
				switch c.Cmd {
				case "node":
					n = fakeNode(t, arg("name"), num("inc"), int(num("npes")))
					return ""
				case "see":
					see(n, arg("name"), num("inc"))
					return ""
				case "report", "seal":
					kind := kindReport
					if c.Cmd == "seal" {
						kind = kindSeal
					}
					deliverTo(n, msg{Kind: kind, Seq: uint64(num("seq")), Hash: hashOf(arg("hash")), From: arg("from"), Addr: addrOf(arg("from"))})
					return ""
				case "step":
					_, resend := c.Arg("resend")
					res := n.step(resend)
					var b strings.Builder
					for _, s := range res.sends {
						fmt.Fprintf(&b, "send %s to %s hash=%s\n", map[msgKind]string{kindReport: "report", kindSeal: "seal"}[s.m.Kind], s.name, nameOf(s.m.Hash))
					}
					if res.publish {
						b.WriteString("publish\n")
					}
					if res.done {
						b.WriteString("done\n")
					}
					if res.err != nil {
						fmt.Fprintf(&b, "error: %v\n", res.err)
					}
					if b.Len() == 0 {
						return "nothing"
					}
					return b.String()
				case "state":
					return fmt.Sprintf("sealed=%v table=[%s]", n.sealed, names(n.table))
				}
				t.Fatalf("%s: unknown command %q", c.Pos, c.Cmd)
				return ""
			})
		})
	}
}
