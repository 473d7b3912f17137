package rdma

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

func newTestToken() *readToken { return &readToken{freed: make(chan struct{}, 1)} }

// TestReadTokenHandoff: callers that take the token with one CAS and
// parties that wait for it pass it among themselves; one holder at a
// time, and each sees the writes of the holders before it (run with
// -race: the counter is a plain int, guarded by the token alone).
func TestReadTokenHandoff(t *testing.T) {
	tok := newTestToken()
	const workers, rounds = 8, 500
	var inside atomic.Int32
	counter := 0
	var wg sync.WaitGroup
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				if g%2 == 0 {
					for !tok.tryTake() { // a caller that finds it held and retries
						runtime.Gosched()
					}
				} else if !tok.take(nil) {
					t.Error("take(nil) gave up")
					return
				}
				if n := inside.Add(1); n != 1 {
					t.Errorf("%d holders at once", n)
				}
				counter++
				inside.Add(-1)
				tok.release()
			}
		}()
	}
	wg.Wait()
	if counter != workers*rounds {
		t.Fatalf("counter %d, want %d", counter, workers*rounds)
	}
	if !tok.tryTake() {
		t.Fatal("token still held after every holder released it")
	}
}

// TestReadTokenWakesEveryWaiter: waiters registered while the token is
// held each get it in turn after one release; a waiter whose stop closes
// gives up without taking it.
func TestReadTokenWakesEveryWaiter(t *testing.T) {
	tok := newTestToken()
	if !tok.tryTake() {
		t.Fatal("fresh token held")
	}
	stop := make(chan struct{})
	gaveUp := make(chan bool)
	go func() { gaveUp <- !tok.take(stop) }()
	const waiters = 5
	got := make(chan int, waiters)
	for i := range waiters {
		go func() {
			if tok.take(nil) {
				got <- i
				tok.release()
			}
		}()
	}
	for tok.waiters.Load() != waiters+1 {
		runtime.Gosched()
	}
	close(stop)
	if !<-gaveUp {
		t.Fatal("a waiter whose stop closed took the held token")
	}
	if tok.tryTake() {
		t.Fatal("tryTake took a held token")
	}
	tok.release()
	seen := map[int]bool{}
	for range waiters {
		seen[<-got] = true
	}
	if len(seen) != waiters {
		t.Fatalf("%d distinct waiters got the token, want %d", len(seen), waiters)
	}
	if !tok.tryTake() || tok.waiters.Load() != 0 {
		t.Fatalf("after the waiters: token free %v, waiters %d", !tok.held.Load(), tok.waiters.Load())
	}
}

// TestSlotSpareFeedsABlockedAcquire: with every slot pending an acquire
// waits; the release that would park its slot in spare hands it over.
func TestSlotSpareFeedsABlockedAcquire(t *testing.T) {
	tab := newSlotTable(1)
	s := tab.tryAcquire()
	if s == nil || tab.tryAcquire() != nil {
		t.Fatal("a table of one slot gave out none or two")
	}
	got := make(chan *slot)
	go func() {
		g, ok := tab.acquire(nil, 1<<62)
		if !ok {
			g = nil
		}
		got <- g
	}()
	for tab.waiting.Load() != 1 {
		runtime.Gosched()
	}
	tab.release(s)
	if g := <-got; g != s {
		t.Fatalf("blocked acquire got %p, want the released slot %p", g, s)
	}
	tab.release(s)
	if tab.spare.Load() != s || tab.tryAcquire() != s {
		t.Fatal("a release with nobody waiting did not keep the slot in spare")
	}
}
