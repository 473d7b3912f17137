package core

import (
	"sync/atomic"
	"testing"
)

// quietFree reads p's QuietWord.
func quietFree(p *PE) bool { return atomic.LoadUint32(p.QuietWord()) != 0 }

// TestMappedLeavesOnEveryEvent: Mapped gives the udma path only for a live
// object of this world on a PE in range, from the PE itself, and only
// while nothing has happened to the world: after a failure (of any PE)
// it gives nil, so every operation goes through Path's checks; a context
// always takes the checked way.
func TestMappedLeavesOnEveryEvent(t *testing.T) {
	w := localWorld(t, 3)
	p := w.PEs[0]
	world := p.WorldID()
	// The team pool, reserved at Start, is the heap's first object: slot
	// 0, generation 1.
	if _, ok := p.Heap().Lookup(0, 1); !ok {
		t.Fatal("no live object in slot 0, generation 1: the test's premise is wrong")
	}
	if m := p.Mapped(1, world, 0, 1); m == nil || m != p.s.paths[1] {
		t.Fatalf("Mapped(1) of a live object: %v, want the udma path %v", m, p.s.paths[1])
	}
	for _, c := range []struct {
		name      string
		pe        int
		world     uint64
		slot, gen uint32
	}{
		{"PE out of range", 3, world, 0, 1},
		{"negative PE", -1, world, 0, 1},
		{"another world", 1, world + 1, 0, 1},
		{"stale generation", 1, world, 0, 2},
		{"slot past the table", 1, world, 1 << 20, 1},
	} {
		if m := p.Mapped(c.pe, c.world, c.slot, c.gen); m != nil {
			t.Errorf("Mapped, %s: %v, want nil", c.name, m)
		}
	}
	if m := (*PE)(nil).Mapped(1, world, 0, 1); m != nil {
		t.Errorf("Mapped on a nil PE: %v, want nil", m)
	}
	ctx, err := p.CreateCtx(0)
	if err != nil {
		t.Fatal(err)
	}
	if m := ctx.Mapped(1, world, 0, 1); m != nil || quietFree(ctx) {
		t.Errorf("context: Mapped %v, quiet free %v; want nil, false (the checked way)", m, quietFree(ctx))
	}
	if !quietFree(p) {
		t.Errorf("QuietWord on an all-mapped PE: 0, want free")
	}
	p.NotifyFailed(2, "test: gone")
	if m := p.Mapped(1, world, 0, 1); m != nil || quietFree(p) {
		t.Errorf("after PE 2 failed: Mapped(1) %v, quiet free %v; want nil, false", m, quietFree(p))
	}
}
