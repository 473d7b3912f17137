package lane

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/goshmem/shmem/internal/datadriven"
)

// testTiming keeps scenario times readable: a heartbeat every 500 ms,
// silence after 3 s, confirmed by probes within 1 s, connect within 10 s,
// dial retries 200 ms apart.
var testTiming = Timing{Heartbeat: 500, Silence: 3000, Connect: 10000, Retry: 200, Probe: 1000}

// TestPeerScenarios drives the transport actor's step through the
// scenarios of testdata/peer. Each command is an event, at=MS its time
// (default: the previous command's); the output lists the actions and
// the state after it.
func TestPeerScenarios(t *testing.T) {
	files, err := filepath.Glob("testdata/peer/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			s := &peerState{t: testTiming, via: -1}
			var now int64
			datadriven.RunFile(t, file, func(t *testing.T, c *datadriven.Case) string {
				if v, ok := c.Arg("at"); ok {
					n, err := strconv.ParseInt(v, 10, 64)
					if err != nil {
						t.Fatalf("%s: at=%q", c.Pos, v)
					}
					now = n
				}
				ev := scenarioEvent(t, c)
				acts := s.step(now, ev)
				var b strings.Builder
				for _, a := range acts {
					b.WriteString(describe(a) + "\n")
				}
				fmt.Fprintf(&b, "state: %s", s.describe())
				return b.String()
			})
		})
	}
}

func intArg(t *testing.T, c *datadriven.Case, key string) int {
	v, ok := c.Arg(key)
	if !ok {
		t.Fatalf("%s: %s= missing", c.Pos, key)
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("%s: %s=%q", c.Pos, key, v)
	}
	return n
}

func scenarioEvent(t *testing.T, c *datadriven.Case) any {
	switch c.Cmd {
	case "route":
		role, _ := c.Arg("role")
		for r := RoleUnknown; r <= RoleRelay; r++ {
			if r.String() == role {
				via := -1
				if r == RoleRelay {
					via = intArg(t, c, "via")
				}
				return evRoute{role: r, via: via}
			}
		}
		t.Fatalf("%s: role=%q", c.Pos, role)
	case "dialed":
		return evDialed{intArg(t, c, "conn")}
	case "dial-failed":
		return evDialFailed{"refused"}
	case "accepted":
		return evAccepted{intArg(t, c, "conn")}
	case "heard":
		return evHeard{intArg(t, c, "conn")}
	case "bye":
		_, abort := c.Arg("abort")
		return evBye{conn: intArg(t, c, "conn"), abort: abort}
	case "lost":
		return evLost{conn: intArg(t, c, "conn"), reason: "reset"}
	case "write-failed":
		return evWriteFailed{conn: intArg(t, c, "conn"), reason: "write: broken pipe"}
	case "tick":
		return evTick{}
	case "send":
		name, _ := c.Arg("msg")
		_, hop := c.Arg("hop")
		return evSend{&out{name: name, hop: hop}}
	case "close":
		_, abort := c.Arg("abort")
		return evClose{abort: abort}
	case "failed":
		return evFailed{}
	case "probe-sent":
		return evProbeSent{round: intArg(t, c, "round"), asked: intArg(t, c, "asked")}
	case "probe-ack":
		age := uint32(noAge)
		if _, ok := c.Arg("age"); ok {
			age = uint32(intArg(t, c, "age"))
		}
		return evProbeAck{from: intArg(t, c, "from"), round: intArg(t, c, "round"), age: age}
	case "probe":
		return evProbe{asker: intArg(t, c, "asker"), round: intArg(t, c, "round")}
	}
	t.Fatalf("%s: unknown command %q", c.Pos, c.Cmd)
	return nil
}

func describe(a any) string {
	switch a := a.(type) {
	case actDial:
		return "dial"
	case actStop:
		return "stop-dial"
	case actRead:
		return fmt.Sprintf("read conn=%d", a.conn)
	case actWrite:
		return fmt.Sprintf("write conn=%d %s", a.conn, a.m.name)
	case actHeartbeat:
		return fmt.Sprintf("heartbeat conn=%d", a.conn)
	case actBye:
		if a.abort {
			return fmt.Sprintf("abort conn=%d", a.conn)
		}
		return fmt.Sprintf("bye conn=%d", a.conn)
	case actClose:
		return fmt.Sprintf("close conn=%d", a.conn)
	case actForward:
		return fmt.Sprintf("forward via=%d %s", a.via, a.m.name)
	case actDeclare:
		if a.linked {
			return "declare-failed linked: " + a.reason
		}
		return "declare-failed: " + a.reason
	case actGone:
		return fmt.Sprintf("gone left=%v", a.left)
	case actDrop:
		return fmt.Sprintf("drop %s (%s)", a.m.name, a.why)
	case actDone:
		return "done"
	case actProbe:
		return fmt.Sprintf("probe round=%d", a.round)
	case actProbeAck:
		if a.age == noAge {
			return fmt.Sprintf("probe-ack asker=%d round=%d age=none", a.asker, a.round)
		}
		return fmt.Sprintf("probe-ack asker=%d round=%d age=%d", a.asker, a.round, a.age)
	}
	return fmt.Sprintf("%T", a)
}

func (s *peerState) describe() string {
	d := fmt.Sprintf("%s role=%s", s.phase, s.role)
	if s.conn != 0 {
		d += fmt.Sprintf(" conn=%d", s.conn)
	}
	if s.role == RoleRelay {
		d += fmt.Sprintf(" via=%d", s.via)
	}
	if len(s.queue) > 0 {
		d += fmt.Sprintf(" queued=%d", len(s.queue))
	}
	if s.sus.on {
		d += fmt.Sprintf(" suspect(round=%d since=%d asked=%d denied=%d)", s.sus.round, s.sus.since, s.sus.asked, s.sus.denied)
	}
	if s.sus.refuted {
		d += fmt.Sprintf(" refuted-by=%d", s.sus.refuter)
	}
	if s.nextDial != 0 {
		d += fmt.Sprintf(" next-dial=%d", s.nextDial)
	}
	if s.writeErr != "" {
		d += fmt.Sprintf(" write-failed(at=%d)", s.writeErrAt)
	}
	return d
}
