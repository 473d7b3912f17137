package heap

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/goshmem/shmem/internal/errs"
)

func mustAlloc(t *testing.T, h *Heap, size, align int64) Result {
	t.Helper()
	r := h.apply(Request{Kind: KindAlloc, Size: size, Align: align})
	if r.Err != nil {
		t.Fatalf("alloc %d/%d: %v", size, align, r.Err)
	}
	return r
}

// TestDeterministic: the same random sequence of requests on two heaps
// gives the same results, which is what keeps the heaps symmetric.
func TestDeterministic(t *testing.T) {
	a, b := New(make([]byte, 1<<20)), New(make([]byte, 1<<20))
	rng := rand.New(rand.NewPCG(1, 2))
	var live []Result
	for i := 0; i < 2000; i++ {
		var req Request
		switch k := rng.IntN(10); {
		case k < 5 || len(live) == 0:
			req = Request{Kind: KindAlloc, Size: rng.Int64N(20000), Align: 64 << rng.IntN(4)}
		case k < 8:
			j := rng.IntN(len(live))
			req = Request{Kind: KindFree, Slot: live[j].Slot, Gen: live[j].Gen}
			live = append(live[:j], live[j+1:]...)
		default:
			j := rng.IntN(len(live))
			req = Request{Kind: KindRealloc, Size: rng.Int64N(40000), Slot: live[j].Slot, Gen: live[j].Gen}
			live = append(live[:j], live[j+1:]...)
		}
		ra, rb := a.apply(req), b.apply(req)
		if ra.Slot != rb.Slot || ra.Gen != rb.Gen || ra.Off != rb.Off || (ra.Err == nil) != (rb.Err == nil) {
			t.Fatalf("step %d %+v: %+v vs %+v", i, req, ra, rb)
		}
		if ra.Err == nil && req.Kind != KindFree {
			live = append(live, ra)
		}
	}
	// No two live objects overlap.
	objs := a.objects()
	for i, x := range objs {
		for j, y := range objs {
			if i < j && x.Live && y.Live && x.Off < y.Off+max(y.Size, 1) && y.Off < x.Off+max(x.Size, 1) {
				t.Fatalf("objects %d %+v and %d %+v overlap", i, x, j, y)
			}
		}
	}
	// Live, the hot path's check, agrees with Lookup on every slot (and
	// one past the table) and every generation handed out.
	for slot := uint32(0); slot <= uint32(len(objs)); slot++ {
		for gen := uint32(0); gen <= a.gen+1; gen++ {
			if _, ok := a.Lookup(slot, gen); a.Live(slot, gen) != ok {
				t.Fatalf("slot %d gen %d: Live %v, Lookup %v", slot, gen, a.Live(slot, gen), ok)
			}
		}
	}
}

func TestFirstFit(t *testing.T) {
	h := New(make([]byte, 4096))
	a := mustAlloc(t, h, 100, 64) // [0,128)
	b := mustAlloc(t, h, 64, 64)  // [128,192)
	c := mustAlloc(t, h, 1, 64)   // [192,256)
	if a.Off != 0 || b.Off != 128 || c.Off != 192 {
		t.Fatalf("offsets %d %d %d", a.Off, b.Off, c.Off)
	}
	if r := h.apply(Request{Kind: KindFree, Slot: a.Slot, Gen: a.Gen}); r.Err != nil {
		t.Fatal(r.Err)
	}
	// Too big for the 128-byte hole: goes after c.
	d := mustAlloc(t, h, 129, 64)
	// It reuses a's table slot, with a new generation.
	if d.Off != 256 || d.Slot != a.Slot || d.Gen == a.Gen {
		t.Fatalf("129 bytes: %+v, want offset 256 in slot %d", d, a.Slot)
	}
	// Fits the hole: first fit puts it at 0.
	e := mustAlloc(t, h, 128, 64)
	if e.Off != 0 {
		t.Fatalf("refill %+v, want offset 0", e)
	}
	if _, ok := h.Lookup(a.Slot, a.Gen); ok {
		t.Fatal("stale generation still found")
	}
	if o, ok := h.Lookup(e.Slot, e.Gen); !ok || o.Off != 0 || o.Size != 128 {
		t.Fatalf("Lookup = %+v, %v", o, ok)
	}
	// Alignment skips ahead.
	f := mustAlloc(t, h, 8, 1024)
	if f.Off != 1024 {
		t.Fatalf("1024-aligned at %d", f.Off)
	}
	// Zero-size objects still get distinct addresses.
	z1, z2 := mustAlloc(t, h, 0, 64), mustAlloc(t, h, 0, 64)
	if z1.Off == z2.Off {
		t.Fatal("two zero-size objects share an offset")
	}
}

func TestRealloc(t *testing.T) {
	mem := make([]byte, 4096)
	h := New(mem)
	a := mustAlloc(t, h, 64, 64)
	copy(mem[a.Off:], "hello, symmetric world, 64 bytes of it.........................")
	// Grow in place while the space after it is free.
	g := h.apply(Request{Kind: KindRealloc, Size: 200, Slot: a.Slot, Gen: a.Gen})
	if g.Err != nil || g.Off != a.Off || g.Slot != a.Slot {
		t.Fatalf("in-place grow: %+v", g)
	}
	// The old handle is stale even though the object did not move.
	if h.Live(a.Slot, a.Gen) || g.Gen == a.Gen {
		t.Fatalf("old handle %d.%d still live after the in-place grow to %d.%d", a.Slot, a.Gen, g.Slot, g.Gen)
	}
	if res := h.apply(Request{Kind: KindFree, Slot: a.Slot, Gen: a.Gen}); !errors.Is(res.Err, errs.ErrInvalidArgument) {
		t.Fatalf("Free of the old handle after an in-place grow: %v, want ErrInvalidArgument", res.Err)
	}
	b := mustAlloc(t, h, 64, 64) // blocks further in-place growth
	// Shrink in place.
	s := h.apply(Request{Kind: KindRealloc, Size: 10, Slot: g.Slot, Gen: g.Gen})
	if s.Err != nil || s.Off != a.Off {
		t.Fatalf("shrink: %+v", s)
	}
	if h.Live(g.Slot, g.Gen) {
		t.Fatal("old handle still live after an in-place shrink")
	}
	if o, _ := h.Lookup(s.Slot, s.Gen); o.Size != 10 {
		t.Fatalf("size after shrink %d", o.Size)
	}
	// Grow past b: the object moves, keeping its (10-byte) contents.
	m := h.apply(Request{Kind: KindRealloc, Size: 1000, Slot: s.Slot, Gen: s.Gen})
	if m.Err != nil || m.Off <= b.Off {
		t.Fatalf("moving grow: %+v (b at %d)", m, b.Off)
	}
	if got := string(mem[m.Off : m.Off+10]); got != "hello, sym" {
		t.Fatalf("contents after move %q", got)
	}
	if _, ok := h.Lookup(s.Slot, s.Gen); ok && (m.Slot != s.Slot || m.Gen != s.Gen) {
		t.Fatal("old handle still live after move")
	}
	// Bad requests.
	for _, r := range []Request{
		{Kind: KindRealloc, Size: 8, Slot: 99, Gen: 1},
		{Kind: KindRealloc, Size: -1, Slot: m.Slot, Gen: m.Gen},
		{Kind: KindFree, Slot: s.Slot, Gen: s.Gen + 100},
		{Kind: KindAlloc, Size: -5, Align: 64},
		{Kind: KindAlloc, Size: 5, Align: 96},
		{Kind: Kind(0)},
		{Kind: Kind(77)},
	} {
		if res := h.apply(r); !errors.Is(res.Err, errs.ErrInvalidArgument) {
			t.Errorf("%+v: %v, want ErrInvalidArgument", r, res.Err)
		}
	}
}

func TestExhaustion(t *testing.T) {
	h := New(make([]byte, 1024))
	for i := 0; i < 8; i++ {
		mustAlloc(t, h, 100, 64) // 128 each: fills the heap exactly
	}
	r := h.apply(Request{Kind: KindAlloc, Size: 1, Align: 64})
	if !errors.Is(r.Err, errs.ErrOutOfMemory) {
		t.Fatalf("full heap: %v", r.Err)
	}
	for _, want := range []string{"need 64 bytes", "0 of 1024 bytes free"} {
		if !strings.Contains(r.Err.Error(), want) {
			t.Errorf("%q does not say %q", r.Err, want)
		}
	}
	h2 := New(make([]byte, 1024))
	mustAlloc(t, h2, 64, 64)
	r = h2.apply(Request{Kind: KindAlloc, Size: 1000, Align: 64})
	if !errors.Is(r.Err, errs.ErrOutOfMemory) || !strings.Contains(r.Err.Error(), "largest hole 960") {
		t.Fatalf("fragmented: %v", r.Err)
	}
	// A huge alignment does not overflow into a bogus offset.
	r = h2.apply(Request{Kind: KindAlloc, Size: 8, Align: 1 << 62})
	if !errors.Is(r.Err, errs.ErrOutOfMemory) {
		t.Fatalf("huge alignment: %+v", r)
	}
}

func TestRegion(t *testing.T) {
	r, err := NewRegion(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	b := r.Bytes()
	if len(b) != 1<<20 || b[0] != 0 || b[len(b)-1] != 0 {
		t.Fatal("region not zeroed")
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil || r.Bytes() != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := NewRegion(0); err == nil {
		t.Fatal("zero-size region")
	}
}
