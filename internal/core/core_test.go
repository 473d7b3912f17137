package core

import (
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/goshmem/shmem/actors"
	"github.com/goshmem/shmem/heap"
	"github.com/goshmem/shmem/internal/actorsys"
	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/internal/fakenet"
	"github.com/goshmem/shmem/transport"
)

// fakeWorld is n PEs of the runtime on a fakenet.Network, sharing one
// actor system and coordinator, without the simulator or any backend.
type fakeWorld struct {
	nw  *fakenet.Network
	pes []*PE
	// failures[r] counts the OnFailure hook's calls on PE r.
	failures []atomic.Int32
}

func newFakeWorld(t *testing.T, n int) *fakeWorld { return newFakeWorldWith(t, n, nil) }

// newFakeWorldWith is newFakeWorld with every PE's Config passed through
// tweak first (when not nil).
func newFakeWorldWith(t *testing.T, n int, tweak func(*Config)) *fakeWorld {
	t.Helper()
	w := &fakeWorld{nw: fakenet.New(n, 4<<20), failures: make([]atomic.Int32, n)}
	sys := actorsys.NewSystem(nil)
	coord := sys.Root.Spawn(actorsys.NewCoordinator(func() int { return n }))
	peers := make([]*actor.PID, n)
	all := make([]int, n)
	for r := range peers {
		peers[r] = sys.NewLocalPID(PEActor(r))
		all[r] = r
	}
	send := func(r int, m any) bool { sys.Root.Send(peers[r], m); return true }
	for r := 0; r < n; r++ {
		cfg := Config{
			Rank: r, NPEs: n, WorldID: 1, Heap: heap.New(w.nw.Heap(r)), Bell: w.nw.Bell(r), Paths: w.nw.Paths(r),
			Shared: all, System: sys, Coordinator: coord, Send: send, Timeout: time.Minute,
			OnFailure: func(int, string, int, bool) { w.failures[r].Add(1) },
		}
		if tweak != nil {
			tweak(&cfg)
		}
		p, err := Start(cfg)
		if err != nil {
			t.Fatal(err)
		}
		w.pes = append(w.pes, p)
	}
	t.Cleanup(func() {
		for _, p := range w.pes {
			p.s.finalized.Store(true)
		}
		sys.Shutdown()
	})
	return w
}

// each runs f on every PE at once and returns the errors by rank.
func (w *fakeWorld) each(f func(p *PE) error) []error {
	out := make([]error, len(w.pes))
	var wg sync.WaitGroup
	for r, p := range w.pes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[r] = f(p)
		}()
	}
	wg.Wait()
	return out
}

func never() bool { return false }

// TestPathChecksPEState: Path refuses a PE outside the world and a failed
// one, naming the operation and the PEs; Accessible agrees.
func TestPathChecksPEState(t *testing.T) {
	w := newFakeWorld(t, 3)
	p := w.pes[0]
	var e *errs.Error
	if _, err := p.Path("Put", 3); !errors.Is(err, errs.ErrInvalidArgument) || !errors.As(err, &e) || e.Op != "Put" || e.Target != 3 {
		t.Errorf("Path to PE 3 of 3: %v", err)
	}
	p.NotifyFailed(2, "test: gone")
	if _, err := p.Path("Get", 2); !errors.Is(err, errs.ErrPEFailed) || !errors.As(err, &e) || e.Op != "Get" || e.Target != 2 {
		t.Errorf("Path to failed PE 2: %v", err)
	}
	if p.Accessible(2) || !p.Accessible(1) {
		t.Errorf("Accessible(2) = %v, Accessible(1) = %v", p.Accessible(2), p.Accessible(1))
	}
	// A second notice about the same PE changes nothing: the hook ran once.
	p.NotifyFailed(2, "again")
	if got := w.failures[0].Load(); got != 1 {
		t.Errorf("OnFailure ran %d times, want 1", got)
	}
}

// TestWaitLocalWakesOnPutAndFailure: a wait ends when a peer's put makes
// its condition true, and with ErrPEFailed when a PE fails meanwhile.
func TestWaitLocalWakesOnPutAndFailure(t *testing.T) {
	w := newFakeWorld(t, 2)
	const off = 1 << 20 // past the team pool
	done := make(chan error, 1)
	go func() {
		done <- w.pes[0].WaitLocal("WaitUntil", func() bool { return transport.Load64(w.pes[0].Local(), off) == 42 })
	}()
	path, err := w.pes[1].Path("Put", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := path.Put(off, []byte{42, 0, 0, 0, 0, 0, 0, 0}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("wait after the put: %v", err)
	}
	go func() { done <- w.pes[0].WaitLocal("WaitUntil", never) }()
	w.pes[0].NotifyFailed(1, "test")
	if err := <-done; !errors.Is(err, errs.ErrPEFailed) {
		t.Fatalf("wait after a failure: %v, want ErrPEFailed", err)
	}
}

// TestGlobalExitReachesEveryPE: one PE's GlobalExit ends every PE's waits
// with its status.
func TestGlobalExitReachesEveryPE(t *testing.T) {
	w := newFakeWorld(t, 4)
	w.pes[2].GlobalExit(7)
	for r, err := range w.each(func(p *PE) error { return p.WaitLocal("WaitUntil", never) }) {
		if st, ok := ExitStatus(err); !ok || st != 7 || !errors.Is(err, errs.ErrFinalized) {
			t.Errorf("PE %d: %v, want the exit with status 7", r, err)
		}
	}
}

// TestHeapOpAgreement: the same request gives every PE the same object;
// different requests, or one PE's refusal, fail on every PE.
func TestHeapOpAgreement(t *testing.T) {
	w := newFakeWorld(t, 3)
	res := make([]heap.Result, 3)
	errsOf := w.each(func(p *PE) error {
		r, err := p.HeapOp("Malloc", heap.Request{Kind: heap.KindAlloc, Size: 100, Align: heap.MinAlign})
		res[p.MyPE()] = r
		return err
	})
	if err := errors.Join(errsOf...); err != nil {
		t.Fatal(err)
	}
	if res[0] != res[1] || res[1] != res[2] {
		t.Errorf("PEs got different objects: %+v", res)
	}
	for name, req := range map[string]func(r int) heap.Request{
		"sizes": func(r int) heap.Request {
			return heap.Request{Kind: heap.KindAlloc, Size: int64(8 * (r + 1)), Align: heap.MinAlign}
		},
		"refusal": func(r int) heap.Request {
			return map[bool]heap.Request{true: {}, false: {Kind: heap.KindAlloc, Size: 8, Align: heap.MinAlign}}[r == 1]
		},
	} {
		for r, err := range w.each(func(p *PE) error { _, err := p.HeapOp("Malloc", req(p.MyPE())); return err }) {
			if !errors.Is(err, errs.ErrInvalidArgument) {
				t.Errorf("%s: PE %d: %v, want ErrInvalidArgument", name, r, err)
			}
		}
	}
}

// TestNoticesAfterFinalize: Finalize is collective and ends every call
// with ErrFinalized; a failure detector that fires afterwards still goes
// through the PE actor, whose hook floods the notice.
func TestNoticesAfterFinalize(t *testing.T) {
	w := newFakeWorld(t, 3)
	if err := errors.Join(w.each((*PE).Finalize)...); err != nil {
		t.Fatal(err)
	}
	if err := w.pes[0].Check("Put"); !errors.Is(err, errs.ErrFinalized) {
		t.Errorf("Check after Finalize: %v", err)
	}
	w.pes[0].NotifyFailed(1, "test: detected late")
	if got := w.failures[0].Load(); got != 1 {
		t.Errorf("OnFailure ran %d times after Finalize, want 1", got)
	}
}

func slogDiscard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// TestCoordinatorLossEndsAgreements: the coordinator runs on PE 0 and
// never answers (its process is gone). When PE 0 is reported failed, the
// agreements waiting on it end at once with ErrPEFailed naming PE 0, on
// the PEs that were waiting and on one that starts after the notice,
// rather than at the agreement timeout (an hour here).
func TestCoordinatorLossEndsAgreements(t *testing.T) {
	var silent *actor.PID
	w := newFakeWorldWith(t, 3, func(c *Config) {
		if silent == nil {
			silent = c.System.Root.Spawn(actor.PropsFromFunc(func(actor.Context) {}))
		}
		c.Coordinator, c.Timeout = silent, time.Hour
	})
	started := make(chan struct{}, 2)
	errc := make(chan error, 2)
	for _, r := range []int{1, 2} {
		go func() {
			started <- struct{}{}
			_, err := w.pes[r].Agree("Malloc", "heap", 1, []int{0, 1, 2}, r, nil)
			errc <- err
		}()
	}
	<-started
	<-started
	for _, r := range []int{1, 2} {
		w.pes[r].NotifyFailed(0, "killed")
	}
	for range 2 {
		if err := <-errc; !errors.Is(err, errs.ErrPEFailed) || !strings.Contains(err.Error(), "PE 0") {
			t.Fatalf("waiting agreement: %v, want ErrPEFailed naming PE 0", err)
		}
	}
	if _, err := w.pes[1].Agree("Malloc", "heap", 2, []int{0, 1, 2}, 1, nil); !errors.Is(err, errs.ErrPEFailed) {
		t.Fatalf("agreement after the notice: %v, want ErrPEFailed", err)
	}
}

// localWorld is an in-process world of npes PEs with 1 MiB heaps, closed
// when the test ends.
func localWorld(t *testing.T, npes int) *LocalWorld {
	t.Helper()
	w, err := NewLocalWorld(LocalConfig{NPEs: npes, HeapSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// TestPeerLeftFollowsNotices: the PE actor runs OnPeerLeft for a PeerLeft
// only after the notices sent to it before were recorded, so the data
// paths to a departed PE fail after the failure that made it leave is
// known; and a lock wait whose poll such a path ends names that failure,
// not the departed PE.
func TestPeerLeftFollowsNotices(t *testing.T) {
	type seen struct {
		rank       int
		failedThen bool
	}
	left := make(chan seen, 1)
	var w *fakeWorld
	w = newFakeWorldWith(t, 3, func(c *Config) {
		if c.Rank == 2 {
			c.OnPeerLeft = func(r int) { left <- seen{r, w.pes[2].s.failed.Load(1) != nil} }
		}
	})
	p := w.pes[2]
	sys := p.s.cfg.System
	pid := sys.NewLocalPID(PEActor(2))
	sys.Root.Send(pid, &actors.PEFailed{Rank: 1, Reason: "test: killed", Origin: 0})
	sys.Root.Send(pid, PeerLeft{Rank: 0})
	select {
	case s := <-left:
		if s.rank != 0 || !s.failedThen {
			t.Fatalf("OnPeerLeft saw %+v, want PE 0 with PE 1's failure recorded", s)
		}
	case <-time.After(time.Minute):
		t.Fatal("OnPeerLeft did not run")
	}
	gone := errs.New("Atomic", 2, 0, errs.ErrPEFailed, "PE 0 called Finalize")
	err := p.WaitLock("SetLock", 1<<20, 0, func() (bool, error) { return false, gone })
	var e *errs.Error
	if !errors.Is(err, errs.ErrPEFailed) || !errors.As(err, &e) || e.Op != "SetLock" || e.Target != 1 {
		t.Fatalf("lock wait whose poll failed after PE 1 failed: %v, want SetLock naming PE 1", err)
	}
}
