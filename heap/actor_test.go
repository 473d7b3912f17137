package heap

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/goshmem/shmem/internal/datadriven"
	"github.com/goshmem/shmem/internal/errs"
)

// TestActorScenarios drives a heap actor from testdata/agree:
//
//	new rank=<r> size=<bytes> [limit=<bytes>]
//	grown [err=<word>]
//	begin op=<Op> <request>
//	agreed seq=<n> [err=<word>]
//	<one request per member, in rank order>
//	reserve <request>
//
// where a request is "kind=alloc|free|realloc size=<n> align=<n> slot=<n>
// gen=<n> grow=<n>" (fields optional) or "refuse" (the zero Request). It prints the
// actor's effects.
func TestActorScenarios(t *testing.T) {
	var a *Actor
	datadriven.RunFile(t, "testdata/agree", func(t *testing.T, d *datadriven.Case) string {
		switch d.Cmd {
		case "new":
			size, _ := d.Arg("size")
			n, _ := strconv.Atoi(size)
			rank, _ := d.Arg("rank")
			r, _ := strconv.Atoi(rank)
			limit := n
			if l, ok := d.Arg("limit"); ok {
				limit, _ = strconv.Atoi(l)
			}
			a = NewActor(NewGrowable(make([]byte, limit), int64(n)), r)
			return ""
		case "grown":
			m := Grown{}
			if e, ok := d.Arg("err"); ok {
				m.Err = errors.New(e)
			}
			return effects(a.Step(m)) + fmt.Sprintf("heap size %d\n", a.Heap().Size())
		case "begin":
			op, _ := d.Arg("op")
			return effects(a.Step(Begin{Op: op, Req: parseRequest(t, d.Pos, d.Args)}))
		case "reserve":
			return effects(a.Step(Reserve{Req: parseRequest(t, d.Pos, d.Args)}))
		case "agreed":
			v, _ := d.Arg("seq")
			seq, _ := strconv.ParseUint(v, 10, 64)
			m := Agreed{Seq: seq}
			if e, ok := d.Arg("err"); ok {
				m.Err = errs.New("Malloc", 0, 2, errs.ErrPEFailed, "%s", e)
			}
			for _, l := range strings.Split(d.Input, "\n") {
				if l == "" {
					continue
				}
				req := parseRequest(t, d.Pos, strings.Fields(l))
				b, err := msgpack.Marshal(&req)
				if err != nil {
					t.Fatal(err)
				}
				m.Payloads = append(m.Payloads, b)
			}
			return effects(a.Step(m))
		}
		t.Fatalf("%s: unknown command %s", d.Pos, d.Cmd)
		return ""
	})
}

func parseRequest(t *testing.T, pos string, args []string) Request {
	var r Request
	for _, a := range args {
		k, v, _ := strings.Cut(a, "=")
		n, _ := strconv.ParseInt(v, 10, 64)
		switch k {
		case "kind":
			r.Kind = map[string]Kind{"alloc": KindAlloc, "free": KindFree, "realloc": KindRealloc}[v]
		case "size":
			r.Size = n
		case "align":
			r.Align = n
		case "slot":
			r.Slot = uint32(n)
		case "gen":
			r.Gen = uint32(n)
		case "grow":
			r.Grow = n
		case "nogrow":
			r.Grow = growFailed
		case "refuse", "op":
		default:
			t.Fatalf("%s: unknown request field %s", pos, k)
		}
	}
	return r
}

func effects(es []any) string {
	if len(es) == 0 {
		return "no effects"
	}
	var b strings.Builder
	for _, e := range es {
		switch e := e.(type) {
		case Propose:
			var r Request
			if err := msgpack.Unmarshal(e.Payload, &r); err != nil {
				fmt.Fprintf(&b, "propose seq=%d undecodable: %v\n", e.Seq, err)
				continue
			}
			fmt.Fprintf(&b, "propose seq=%d %+v\n", e.Seq, r)
		case Done:
			if e.Err != nil {
				fmt.Fprintf(&b, "done err: %v (invalid=%v oom=%v failed=%v)\n", e.Err,
					errors.Is(e.Err, errs.ErrInvalidArgument), errors.Is(e.Err, errs.ErrOutOfMemory), errors.Is(e.Err, errs.ErrPEFailed))
				continue
			}
			fmt.Fprintf(&b, "done slot=%d gen=%d off=%d\n", e.Result.Slot, e.Result.Gen, e.Result.Off)
		default:
			fmt.Fprintf(&b, "%T%+v\n", e, e)
		}
	}
	return b.String()
}
