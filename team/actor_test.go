package team

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/goshmem/shmem/internal/datadriven"
	"github.com/goshmem/shmem/internal/errs"
)

var kindByName = func() map[string]Kind {
	m := map[string]Kind{}
	for k := KindBarrier; k <= KindFinalize; k++ {
		m[k.String()] = k
	}
	return m
}()

// TestScenarios drives team actors from the files in testdata/. Every
// command names the member it goes to (pe=<world rank>), so several
// members' actors of one team run side by side:
//
//	new id=<id> members=<a,b,...> slot=<n>      (one actor per member)
//	begin pe=<r> kind=<Kind>
//	observe pe=<r> from=<team rank> seq=<n> kind=<Kind>
//	split pe=<r> params=<a,b> [err=<word>]
//	<one line per member: its params and free-slot bitmap, "params=.. free=0x..">
//	<"list a,b,..." lines: the new teams' members, as team indices>
//	destroyed pe=<r> [err=<word>]
//
// and prints each effect.
func TestScenarios(t *testing.T) {
	for _, file := range []string{"testdata/ops", "testdata/split"} {
		t.Run(file, func(t *testing.T) {
			actors := map[int]*Actor{}
			datadriven.RunFile(t, file, func(t *testing.T, d *datadriven.Case) string {
				arg := func(k string) string { v, _ := d.Arg(k); return v }
				num := func(k string) int {
					n, err := strconv.Atoi(arg(k))
					if err != nil {
						t.Fatalf("%s: %s: %v", d.Pos, k, err)
					}
					return n
				}
				if d.Cmd == "new" {
					members := ints(t, arg("members"))
					for _, m := range members {
						actors[m] = New(arg("id"), members, m, num("slot"))
					}
					return ""
				}
				a := actors[num("pe")]
				if a == nil {
					t.Fatalf("%s: no actor for pe %s", d.Pos, arg("pe"))
				}
				var out []any
				switch d.Cmd {
				case "begin":
					out = a.Step(Begin{Kind: kindByName[arg("kind")], Op: arg("kind")})
				case "observe":
					out = a.Step(Observe{From: num("from"), Op: Op{Seq: uint64(num("seq")), Kind: kindByName[arg("kind")]}})
				case "split":
					m := SplitAgreed{Op: "SplitStrided", Params: int64s(t, arg("params")), Slots: 32}
					if pt := arg("perteam"); pt != "" {
						m.Op, m.PerTeam = "Split2D", ints(t, pt)
					}
					if o := arg("op"); o != "" {
						m.Op = o
					}
					if e := arg("err"); e != "" {
						m.BuildErr = errors.New(e)
					}
					for _, l := range strings.Split(d.Input, "\n") {
						f := strings.Fields(l)
						switch {
						case len(f) == 2 && f[0] == "list":
							m.Lists = append(m.Lists, ints(t, f[1]))
						case len(f) == 2:
							_, ps, _ := strings.Cut(f[0], "=")
							_, fr, _ := strings.Cut(f[1], "=")
							free, err := strconv.ParseUint(strings.TrimPrefix(fr, "0x"), 16, 64)
							if err != nil {
								t.Fatalf("%s: %v", d.Pos, err)
							}
							m.Payloads = append(m.Payloads, SplitPayload(int64s(t, ps), free))
						}
					}
					out = a.Step(m)
				case "destroyed":
					var err error
					if e := arg("err"); e != "" {
						err = errs.New("Destroy", num("pe"), errs.NoPE, errs.ErrPEFailed, "%s", e)
					}
					out = a.Step(Destroyed{Err: err})
				default:
					t.Fatalf("%s: unknown command %s", d.Pos, d.Cmd)
				}
				if len(out) == 0 {
					return "no effects"
				}
				var b strings.Builder
				for _, e := range out {
					if f, ok := e.(Failed); ok {
						fmt.Fprintf(&b, "failed: %v\n", f.Err)
						continue
					}
					fmt.Fprintf(&b, "%T%+v\n", e, e)
				}
				return b.String()
			})
		})
	}
}

// TestMismatchNamesBothPEs: two members whose third operations differ
// (one called Reduce, the other Barrier) learn it from each other's
// report, and the error says which PE called what.
func TestMismatchNamesBothPEs(t *testing.T) {
	members := []int{4, 7}
	a, b := New("world", members, 4, 0), New("world", members, 7, 0)
	for _, k := range []Kind{KindSync, KindBroadcast} {
		a.Step(Begin{Kind: k})
		b.Step(Begin{Kind: k})
	}
	ea, eb := a.Step(Begin{Kind: KindReduce}), b.Step(Begin{Kind: KindBarrier})
	opA, opB := ea[0].(Started).Op, eb[0].(Started).Op
	if opA.Seq != 3 || opB.Seq != 3 {
		t.Fatalf("numbers %d and %d, want 3", opA.Seq, opB.Seq)
	}
	for _, c := range []struct {
		me   *Actor
		from int
		op   Op
		want string
	}{
		{a, 1, opB, "PE 4 called Reduce, PE 7 called Barrier"},
		{b, 0, opA, "PE 7 called Barrier, PE 4 called Reduce"},
	} {
		out := c.me.Step(Observe{From: c.from, Op: c.op})
		if len(out) != 1 {
			t.Fatalf("effects %v, want one failure", out)
		}
		err := out[0].(Failed).Err
		var e *errs.Error
		if !errors.Is(err, errs.ErrInvalidArgument) || !errors.As(err, &e) || e.Target != members[c.from] || !strings.Contains(err.Error(), c.want) {
			t.Errorf("mismatch error %v, want ErrInvalidArgument naming PE %d and %q", err, members[c.from], c.want)
		}
	}
	// The same kinds compare equal.
	if out := a.Step(Observe{From: 1, Op: Op{Seq: 2, Kind: KindBroadcast}}); len(out) != 0 {
		t.Errorf("matching operation gave %v", out)
	}
}

func ints(t *testing.T, s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		out = append(out, n)
	}
	return out
}

func int64s(t *testing.T, s string) []int64 {
	var out []int64
	for _, n := range ints(t, s) {
		out = append(out, int64(n))
	}
	return out
}
