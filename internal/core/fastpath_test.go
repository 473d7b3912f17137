package core

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/goshmem/shmem/internal/errs"
)

// TestFastPathLeavesOnEveryEvent: FastPath answers only while nothing has
// happened to the world; after a failure (of any PE, not only the target)
// and after Finalize it gives nil, so every operation goes through Path's
// checks, which refuse what they must; Quiet's skip ends with it.
func TestFastPathLeavesOnEveryEvent(t *testing.T) {
	w := newFakeWorld(t, 3)
	p := w.pes[0]
	if p.FastPath(1) == nil || p.FastPath(3) != nil || p.FastPath(-1) != nil {
		t.Fatalf("FastPath before any event: PE 1 %v, PE 3 %v, PE -1 %v; want a path, nil, nil", p.FastPath(1), p.FastPath(3), p.FastPath(-1))
	}
	p.NotifyFailed(2, "test: gone")
	if p.FastPath(1) != nil {
		t.Errorf("FastPath(1) after PE 2 failed: want nil (the checked way)")
	}
	if _, err := p.Path("Put", 1); err != nil {
		t.Errorf("Path to live PE 1 after PE 2 failed: %v", err)
	}
	if _, err := p.Path("Put", 2); !errors.Is(err, errs.ErrPEFailed) {
		t.Errorf("Path to failed PE 2: %v, want ErrPEFailed", err)
	}

	w = newFakeWorld(t, 2)
	if err := errors.Join(w.each((*PE).Finalize)...); err != nil {
		t.Fatal(err)
	}
	if w.pes[0].FastPath(1) != nil {
		t.Errorf("FastPath after Finalize: want nil")
	}
	if _, err := w.pes[0].Path("Put", 1); !errors.Is(err, errs.ErrFinalized) {
		t.Errorf("Path after Finalize: %v, want ErrFinalized", err)
	}
	if err := w.pes[0].Quiet(); !errors.Is(err, errs.ErrFinalized) || (atomic.LoadUint32(&w.pes[0].s.quietFree) != 0) {
		t.Errorf("Quiet after Finalize: %v (quietFree %v), want ErrFinalized by the checked way", err, (atomic.LoadUint32(&w.pes[0].s.quietFree) != 0))
	}
}
