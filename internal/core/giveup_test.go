package core

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goshmem/shmem/heap"
	"github.com/goshmem/shmem/internal/errs"
)

// target returns the PE err names as its target, or errs.NoPE.
func target(err error) int {
	var e *errs.Error
	if errors.As(err, &e) {
		return e.Target
	}
	return errs.NoPE
}

// TestGiveUpWakesAWaitWithoutTimeout: in the in-process world (the
// simulator's), PE 2 alone has an operation timeout and gives up a
// BarrierAll that PE 0, with no timeout, waits in too; PE 1 is busy
// until PE 2 has given up. PE 2's error names PE 1 as not arrived; PE 0's
// wait, which PE 1 alone could have completed, ends naming PE 2 (it
// waited for ever), and PE 1's late BarrierAll fails at once naming PE 2
// (it used to complete and leave PE 0 to complete too: a barrier that PE 2
// never finished).
func TestGiveUpWakesAWaitWithoutTimeout(t *testing.T) {
	w := localWorld(t, 3)
	w.PEs[2].SetOpTimeout(100 * time.Millisecond)
	gaveUp := make(chan struct{})
	got := make([]error, 3)
	var wg sync.WaitGroup
	for r, p := range w.PEs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r == 1 {
				<-gaveUp
			}
			got[r] = p.BarrierAll()
			if r == 2 {
				close(gaveUp)
			}
		}()
	}
	wg.Wait()
	if err := got[2]; !errors.Is(err, errs.ErrTimeout) || target(err) != 1 || !strings.Contains(err.Error(), "PE 1 has not arrived") {
		t.Errorf("PE 2 (gives up): %v, want ErrTimeout naming PE 1 as not arrived", err)
	}
	for _, r := range []int{0, 1} {
		if err := got[r]; !errors.Is(err, errs.ErrPEFailed) || target(err) != 2 || !strings.Contains(err.Error(), "PE 2 gave up operation 1 (Barrier) of team world") {
			t.Errorf("PE %d: %v, want ErrPEFailed naming PE 2 and the barrier it gave up", r, err)
		}
	}
	// The team is unusable on every PE, each with its own sentinel, and
	// nobody waits.
	for r, p := range w.PEs {
		want := errs.ErrPEFailed
		if r == 2 {
			want = errs.ErrTimeout
		}
		if err := p.BarrierAll(); !errors.Is(err, want) {
			t.Errorf("PE %d: BarrierAll after it: %v, want %v at once", r, err, want)
		}
	}
	finalizeAll(t, w.PEs)
}

// TestLateMembersOfGivenUpBarrierFail: every PE of an in-process world
// has the operation timeout; PE 0 gives up a BarrierAll while the others
// are busy, and then they call it, late: each fails at once naming PE 0
// (PE 1 used to complete it, and PEs 2 and 3 to time out too, a full
// timeout later, naming nobody).
func TestLateMembersOfGivenUpBarrierFail(t *testing.T) {
	w := localWorld(t, 4)
	for _, p := range w.PEs {
		p.SetOpTimeout(100 * time.Millisecond)
	}
	gaveUp := make(chan struct{})
	got := make([]error, 4)
	var wg sync.WaitGroup
	for r, p := range w.PEs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r != 0 {
				<-gaveUp
			}
			got[r] = p.BarrierAll()
			if r == 0 {
				close(gaveUp)
			}
		}()
	}
	wg.Wait()
	if !errors.Is(got[0], errs.ErrTimeout) || !strings.Contains(got[0].Error(), "PEs 1-3 have not arrived") {
		t.Errorf("PE 0 (gives up): %v, want ErrTimeout naming PEs 1-3 as not arrived", got[0])
	}
	for r := 1; r < 4; r++ {
		if err := got[r]; !errors.Is(err, errs.ErrPEFailed) || target(err) != 0 {
			t.Errorf("PE %d (late): %v, want ErrPEFailed naming PE 0", r, err)
		}
	}
	finalizeAll(t, w.PEs)
}

// TestGivenUpAllocationGivesUpTheWorld: PE 2 alone has an operation
// timeout and gives up a collective allocation the others are late for.
// Their allocation may still complete with PE 2's proposal, which PE 2
// never applied, so PE 2 gives up TeamWorld: its next allocation fails at
// once with ErrTimeout instead of proposing from a heap that disagrees
// with theirs, and their next BarrierAll fails at once naming PE 2 and
// the allocation (it used to wait for PE 2 for ever).
func TestGivenUpAllocationGivesUpTheWorld(t *testing.T) {
	w := localWorld(t, 3)
	w.PEs[2].SetOpTimeout(100 * time.Millisecond)
	req := heap.Request{Kind: heap.KindAlloc, Size: 64, Align: heap.MinAlign}
	if _, err := w.PEs[2].HeapOp("Malloc", req); !errors.Is(err, errs.ErrTimeout) {
		t.Fatalf("PE 2's Malloc without the others: %v, want ErrTimeout", err)
	}
	if _, err := w.PEs[2].HeapOp("Malloc", req); !errors.Is(err, errs.ErrTimeout) || !strings.Contains(err.Error(), "unusable") {
		t.Errorf("PE 2's next Malloc: %v, want ErrTimeout at once (TeamWorld given up)", err)
	}
	var wg sync.WaitGroup
	got := make([]error, 2)
	for r, p := range w.PEs[:2] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = p.HeapOp("Malloc", req) // completes or not: PE 2's proposal is in
			got[r] = p.BarrierAll()
		}()
	}
	wg.Wait()
	for r, err := range got {
		if !errors.Is(err, errs.ErrPEFailed) || target(err) != 2 || !strings.Contains(err.Error(), "(Alloc)") {
			t.Errorf("PE %d: BarrierAll after PE 2 gave up the allocation: %v, want ErrPEFailed naming PE 2 and the allocation", r, err)
		}
	}
	finalizeAll(t, w.PEs)
}

// finalizeAll finalizes every PE at once; their errors are not the point.
func finalizeAll(t *testing.T, pes []*PE) {
	t.Helper()
	var wg sync.WaitGroup
	for _, p := range pes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = p.Finalize()
		}()
	}
	wg.Wait()
}

// TestCoordinatorLeftEndsAgreement: PEs 1 and 2 wait in Finalize's
// agreement for an answer from the coordinator, whose PE 0 never joins and
// then leaves the world (its Finalize gave up at its operation timeout and
// its links said goodbye: PeerLeft). Their Finalize fails naming PE 0 once
// the grace for an answer already on its way is over (it used to wait for
// the agreement's own timeout, 10 minutes by default, and end with
// ErrTimeout naming nobody).
func TestCoordinatorLeftEndsAgreement(t *testing.T) {
	w := newFakeWorldWith(t, 3, func(c *Config) { c.Timeout = 20 * time.Second })
	done := make(chan error, 2)
	for _, p := range w.pes[1:] {
		go func() { done <- p.Finalize() }()
	}
	for _, p := range w.pes[1:] {
		sys := p.s.cfg.System
		sys.Root.Send(sys.NewLocalPID(PEActor(p.MyPE())), PeerLeft{Rank: 0})
	}
	for range 2 {
		if err := <-done; !errors.Is(err, errs.ErrPEFailed) || target(err) != 0 || !strings.Contains(err.Error(), "left the world") {
			t.Errorf("Finalize after the coordinator's PE left: %v, want ErrPEFailed naming PE 0", err)
		}
	}
}

// TestFinalizeAgainReturnsTheFirstResult: a PE whose Finalize timed out
// (its peers never came) gets the same error from a second Finalize, not
// nil as before; a PE whose Finalize succeeded gets nil again.
func TestFinalizeAgainReturnsTheFirstResult(t *testing.T) {
	w := localWorld(t, 2)
	p := w.PEs[0]
	p.SetOpTimeout(50 * time.Millisecond)
	first := p.Finalize()
	if !errors.Is(first, errs.ErrTimeout) || !strings.Contains(first.Error(), "PE 1 has not called Finalize") {
		t.Fatalf("Finalize without PE 1: %v, want ErrTimeout naming PE 1", first)
	}
	if again := p.Finalize(); again != first {
		t.Errorf("second Finalize: %v, want the first's %v", again, first)
	}
	q := w.PEs[1]
	first = q.Finalize() // PE 0's contribution is at the coordinator: the round completes
	if again := q.Finalize(); again != first {
		t.Errorf("PE 1's second Finalize: %v, want the first's %v", again, first)
	}
}
