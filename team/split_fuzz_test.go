package team

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/goshmem/shmem/internal/errs"
)

// fuzzParams are the split parameters of the member judging the fuzzed
// agreement.
var fuzzParams = []int64{1, 2}

// FuzzSplitPayloads: a split's agreement carries every member's
// SplitPayload as bytes from other processes. Whatever they are, planSplit
// answers with one Failed or one SplitPlan and never panics; a payload that
// is not this member's parameters fails the split (ErrInvalidArgument); a
// plan gives each new team a slot free on every one of its members, and
// teams that share a member different slots.
//
// payloads is read as members' payloads: a count byte (1 to 8 members),
// then per member a length byte (mod 41) and that many bytes. teams holds
// one byte per new team: its members as a bitmap of team indices.
func FuzzSplitPayloads(f *testing.F) {
	f.Fuzz(func(t *testing.T, payloads, teams []byte) {
		if len(payloads) == 0 {
			return
		}
		n := 1 + int(payloads[0]%8)
		rest := payloads[1:]
		m := SplitAgreed{Op: "SplitStrided", Params: fuzzParams, Slots: 64}
		for range n {
			var p []byte
			if len(rest) > 0 {
				l := min(int(rest[0]%41), len(rest)-1)
				p, rest = rest[1:1+l], rest[1+l:]
			}
			m.Payloads = append(m.Payloads, p)
		}
		for _, b := range teams {
			var l []int
			for j := range n {
				if b&(1<<j) != 0 {
					l = append(l, j)
				}
			}
			if len(l) > 0 {
				m.Lists = append(m.Lists, l)
			}
		}
		members := make([]int, n)
		for i := range members {
			members[i] = 10 + i
		}
		mine := SplitPayload(fuzzParams, 0)
		matching := true
		for _, p := range m.Payloads {
			matching = matching && len(p) == len(mine) && string(p[:len(mine)-8]) == string(mine[:len(mine)-8])
		}
		out := New("t", members, members[0], 0).Step(m)
		if len(out) != 1 {
			t.Fatalf("%d effects: %v", len(out), out)
		}
		switch e := out[0].(type) {
		case Failed:
			if !matching && !errors.Is(e.Err, errs.ErrInvalidArgument) {
				t.Fatalf("mismatched payloads failed with %v, want ErrInvalidArgument", e.Err)
			}
		case SplitPlan:
			if !matching {
				t.Fatalf("mismatched payloads %x planned %v", m.Payloads, e.Slots)
			}
			if len(e.Slots) != len(m.Lists) {
				t.Fatalf("%d slots for %d teams", len(e.Slots), len(m.Lists))
			}
			owner := map[[2]int]int{} // (member, slot) -> team
			for i, l := range m.Lists {
				s := e.Slots[i]
				if s < 0 || s >= 64 {
					t.Fatalf("team %d: slot %d", i, s)
				}
				for _, j := range l {
					free := binary.LittleEndian.Uint64(m.Payloads[j][len(mine)-8:])
					if free&(1<<s) == 0 {
						t.Fatalf("team %d got slot %d, not free on member %d (%#x)", i, s, j, free)
					}
					if o, taken := owner[[2]int{j, s}]; taken {
						t.Fatalf("teams %d and %d share member %d and slot %d", o, i, j, s)
					}
					owner[[2]int{j, s}] = i
				}
			}
		default:
			t.Fatalf("effect %T", out[0])
		}
	})
}
