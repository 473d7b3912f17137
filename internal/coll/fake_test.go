package coll

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goshmem/shmem/actors"
	"github.com/goshmem/shmem/internal/actorsys"
	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/internal/fakenet"
	"github.com/goshmem/shmem/transport"
)

// fakeWorld is n PEs on a fakenet.Network, each with a Runtime that has
// exactly what a team needs and nothing of a real PE: paths, a heap, a
// failure-aware wait, and an agreement run by an actors.Coordinator.
type fakeWorld struct {
	nw    *fakenet.Network
	rts   []*fakeRT
	mu    sync.Mutex // guards coord
	coord actors.Coordinator
}

// heapSize leaves room after the team pool for the tests' data.
const heapSize = 8 << 20

func newFakeWorld(t *testing.T, n int) *fakeWorld {
	t.Helper()
	w := &fakeWorld{nw: fakenet.New(n, heapSize), coord: actors.Coordinator{NPEs: n}}
	slots := PoolSlots(n, heapSize)
	for r := 0; r < n; r++ {
		w.rts = append(w.rts, &fakeRT{w: w, me: r, paths: w.nw.Paths(r), pool: NewPool(0, n, slots)})
	}
	return w
}

// dataOff is where tests put their data: past every slot of the pool.
func (w *fakeWorld) dataOff() uint64 {
	p := w.rts[0].pool
	return p.base + uint64(p.slots)*p.slotSize
}

// worlds returns TeamWorld of every PE.
func (w *fakeWorld) worlds(t *testing.T) []*Team {
	members := make([]int, len(w.rts))
	for i := range members {
		members[i] = i
	}
	var out []*Team
	for _, rt := range w.rts {
		tm, err := NewRoot(rt, "world", members, 0)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tm)
	}
	return out
}

// fail fails PE r on the network and at the coordinator.
func (w *fakeWorld) fail(r int) {
	w.nw.Fail(r)
	w.deliver(w.step(nil, &actors.PEFailed{Rank: r, Reason: "test"}))
}

func (w *fakeWorld) step(from any, m any) []actors.Reply {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.coord.Step(from, m)
}

func (w *fakeWorld) deliver(rs []actors.Reply) {
	for _, r := range rs {
		r.To.(chan *actors.GatherReply) <- r.Msg
	}
}

// each runs f on every PE but those in skip, at once, and returns their
// errors by rank.
func (w *fakeWorld) each(f func(r int) error, skip ...int) []error {
	errs := make([]error, len(w.rts))
	var wg sync.WaitGroup
	for r := range w.rts {
		if containsInt(skip, r) {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[r] = f(r)
		}()
	}
	wg.Wait()
	return errs
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

type fakeRT struct {
	w      *fakeWorld
	me     int
	paths  []transport.Path
	pool   *Pool
	collMu sync.Mutex
	// checkAgree makes AgreeChecked run the caller's peer check once
	// before it gathers, as a real agreement that waits long does.
	checkAgree bool
	// waitHook, if set, runs when a wait on the word at off blocks; an
	// error it returns ends the wait (an operation timeout, say).
	waitHook func(op string, off uint64) error
	// agreeHook, if set, gets what an agreement's round gave this PE and
	// returns what AgreeChecked returns (a reply that came too late, say).
	agreeHook func(op string, all [][]byte, err error) ([][]byte, error)
	// sleep is how long a wait sleeps on the bell between checks (10 ms
	// when 0); unrung counts the sleeps that ran out (a ring ends one
	// early, and so may a token an earlier ring left).
	sleep  time.Duration
	unrung atomic.Int32
}

func (f *fakeRT) MyPE() int { return f.me }

func (f *fakeRT) Path(op string, pe int) (transport.Path, error) {
	if pe < 0 || pe >= len(f.paths) {
		return nil, errs.New(op, f.me, pe, errs.ErrInvalidArgument, "no such PE")
	}
	if f.w.nw.Failed(pe) {
		return nil, errs.New(op, f.me, pe, errs.ErrPEFailed, "failed")
	}
	return f.paths[pe], nil
}

func (f *fakeRT) Local() []byte { return f.w.nw.Heap(f.me) }

// WaitLocal sleeps on the PE's bell between checks and fails once any PE
// has failed, as the real runtime does.
func (f *fakeRT) WaitBlocked(op string, blk Blocked, off uint64, cond func() bool) error {
	if f.waitHook != nil {
		if err := f.waitHook(op, off); err != nil {
			return err
		}
	}
	b := f.w.nw.Bell(f.me)
	for i := 0; ; i++ {
		if cond() {
			return nil
		}
		for r := range f.paths {
			if f.w.nw.Failed(r) {
				return errs.New(op, f.me, r, errs.ErrPEFailed, "failed")
			}
		}
		if i > 0 && blk != nil {
			if err := blk.CheckPeers(op); err != nil {
				return err
			}
		}
		armed := b.Arm()
		if cond() {
			b.Disarm()
			return nil
		}
		sleep := f.sleep
		if sleep == 0 {
			sleep = 10 * time.Millisecond
		}
		start := time.Now()
		if !b.Wait(armed, sleep) && time.Since(start) >= sleep {
			f.unrung.Add(1)
		}
		b.Disarm()
	}
}

func (f *fakeRT) Quiet() error          { return nil }
func (f *fakeRT) Fence()                {}
func (f *fakeRT) Check(op string) error { return nil }
func (f *fakeRT) TeamPool() *Pool       { return f.pool }
func (f *fakeRT) FinalizedEarly(int)    {}
func (f *fakeRT) CollectiveLock() func() {
	f.collMu.Lock()
	return f.collMu.Unlock
}

func (f *fakeRT) AgreeChecked(op, domain string, seq uint64, members []int, me int, payload []byte, b Blocked) ([][]byte, error) {
	if len(members) == 1 {
		return [][]byte{payload}, nil
	}
	if f.checkAgree && b != nil {
		if err := b.CheckPeers(op); err != nil {
			return nil, err
		}
	}
	ch := make(chan *actors.GatherReply, 1)
	f.w.deliver(f.w.step(ch, &actors.Gather{Domain: domain, Seq: seq, Rank: me, N: len(members), Members: members, Payload: payload}))
	all, err := actorsys.Result(<-ch, len(members), op, f.me)
	if f.agreeHook != nil {
		return f.agreeHook(op, all, err)
	}
	return all, err
}
