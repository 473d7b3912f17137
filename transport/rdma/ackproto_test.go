package rdma

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/goshmem/shmem/internal/datadriven"
)

// The ack/fence protocol's decisions (ackproto.go), driven one event at a
// time by the scenarios in testdata/ackproto. Run with -rewrite to
// regenerate the expected outputs after a deliberate change, then read the
// diff.

// senderModel is one path's two lanes as numbers, applying the protocol's
// decisions the way lane.go and engine.go apply them to their atomics.
type senderModel struct {
	lanes [2]laneModel
}

type laneModel struct {
	name                            string
	autoAck                         bool
	sent, written, acked, fenceMark uint64
}

func (l *laneModel) String() string {
	return fmt.Sprintf("%s: sent=%d written=%d acked=%d fence=%d backlogged=%v",
		l.name, l.sent, l.written, l.acked, l.fenceMark, backlogged(l.written, l.acked, l.autoAck))
}

func (m *senderModel) state(b *strings.Builder) {
	for i := range m.lanes {
		fmt.Fprintln(b, &m.lanes[i])
	}
}

// lane returns the lane a case names with lane=small|bulk (default small).
func (m *senderModel) lane(t *testing.T, c *datadriven.Case) (int, *laneModel) {
	v, _ := c.Arg("lane")
	switch v {
	case "", "small":
		return small, &m.lanes[small]
	case "bulk":
		return bulk, &m.lanes[bulk]
	}
	t.Fatalf("%s: no lane %q", c.Pos, v)
	return 0, nil
}

func num(t *testing.T, c *datadriven.Case, key string, def uint64) uint64 {
	v, ok := c.Arg(key)
	if !ok {
		return def
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		t.Fatalf("%s: %s=%q: %v", c.Pos, key, v, err)
	}
	return n
}

func flag(c *datadriven.Case, key string) bool {
	_, ok := c.Arg(key)
	return ok
}

// canRead is the reader=free|busy argument: whether a caller that must
// wait for an ack can take the lane's read side itself.
func canRead(c *datadriven.Case) bool {
	v, _ := c.Arg("reader")
	return v != "busy"
}

func TestAckProtoSender(t *testing.T) {
	var m *senderModel
	datadriven.RunFile(t, "testdata/ackproto/sender", func(t *testing.T, c *datadriven.Case) string {
		var b strings.Builder
		switch c.Cmd {
		case "path":
			// A direct path's small lane asks for acks; a relayed path's
			// lanes and every bulk lane are flushed.
			relayed := flag(c, "relayed")
			m = &senderModel{lanes: [2]laneModel{
				{name: "small", autoAck: !relayed},
				{name: "bulk"},
			}}
		case "write":
			// write lane=L [counted] [n=N]: N frames written in a row.
			_, l := m.lane(t, c)
			counted := flag(c, "counted")
			n := num(t, c, "n", 1)
			first, wakes, firstWake := l.sent+1, 0, uint64(0)
			for range n {
				l.sent++
				if counted {
					var wake bool
					l.written, wake = afterCounted(l.acked, l.sent, l.autoAck)
					if wake {
						wakes++
						if firstWake == 0 {
							firstWake = l.sent
						}
					}
				}
			}
			fmt.Fprintf(&b, "frames %d..%d flagAck=%v\n", first, l.sent, askAck(counted, l.autoAck))
			if wakes > 0 {
				fmt.Fprintf(&b, "reader woken at frame %d and %d later ones\n", firstWake, wakes-1)
			}
		case "ack":
			// ack lane=L seq=N [flush]: an opAck, or with flush a flush's answer.
			_, l := m.lane(t, c)
			a, err := onAck(l.sent, l.acked, num(t, c, "seq", 0), !flag(c, "flush"), l.autoAck)
			if err != nil {
				fmt.Fprintf(&b, "error: %v\n", err)
				break
			}
			l.acked = a
		case "fence":
			for i := range m.lanes {
				l := &m.lanes[i]
				l.fenceMark = fenceMarkAfter(l.written, l.acked, l.fenceMark)
			}
		case "send":
			// send lane=L [raw] [reader=busy]: what must happen before a frame
			// goes out on L (a Get or fetching atomic with raw).
			i, _ := m.lane(t, c)
			o := &m.lanes[1-i]
			mark := orderMark(o.written, o.fenceMark, flag(c, "raw"))
			fmt.Fprintf(&b, "%s must have applied %d: %v\n", o.name, mark, settleAction(o.acked, mark, o.autoAck, canRead(c)))
		case "quiet":
			for i := range m.lanes {
				l := &m.lanes[i]
				step, mark := quietAction(l.written, l.acked, l.autoAck)
				if step == quietSkip {
					fmt.Fprintf(&b, "%s: %v\n", l.name, step)
					continue
				}
				// Quiet settles an awaited lane as settle does: reading the
				// acks itself, or flushing when someone else reads.
				how := step.String()
				if step == quietAwait {
					how = settleAction(l.acked, mark, l.autoAck, canRead(c)).String()
				}
				fmt.Fprintf(&b, "%s: wait for %d: %s\n", l.name, mark, how)
			}
		default:
			t.Fatalf("%s: unknown command %q", c.Pos, c.Cmd)
		}
		m.state(&b)
		return b.String()
	})
}

// TestAckProtoReceiver drives ackPolicy with the frames of the case's
// input, one line per run of frames: "asked", "unasked" or "relayed"
// (applied elsewhere, so it asks nothing here), optionally "xN" for N such
// frames and "dry" when the input runs dry after the run's last frame. It
// prints each frame that sends an ack or writes the responses out.
func TestAckProtoReceiver(t *testing.T) {
	var a ackPolicy
	datadriven.RunFile(t, "testdata/ackproto/receiver", func(t *testing.T, c *datadriven.Case) string {
		var b strings.Builder
		switch c.Cmd {
		case "reset":
			a = ackPolicy{}
			return ""
		case "read":
		default:
			t.Fatalf("%s: unknown command %q", c.Pos, c.Cmd)
		}
		for _, line := range strings.Split(c.Input, "\n") {
			f := strings.Fields(line)
			if len(f) == 0 {
				continue
			}
			asked := f[0] == "asked"
			n, dry := 1, false
			for _, w := range f[1:] {
				switch {
				case w == "dry":
					dry = true
				case strings.HasPrefix(w, "x"):
					v, err := strconv.Atoi(w[1:])
					if err != nil {
						t.Fatalf("%s: %q: %v", c.Pos, line, err)
					}
					n = v
				default:
					t.Fatalf("%s: %q: unknown word %q", c.Pos, line, w)
				}
			}
			for i := range n {
				ack, flush := a.frame(asked, dry && i == n-1)
				switch {
				case ack != 0:
					fmt.Fprintf(&b, "frame %d: ack %d, write out\n", a.seq, ack)
				case flush:
					fmt.Fprintf(&b, "frame %d: write out\n", a.seq)
				}
			}
		}
		fmt.Fprintf(&b, "read=%d acked=%d due=%v\n", a.seq, a.acked, a.due)
		return b.String()
	})
}
