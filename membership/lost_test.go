package membership

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goshmem/shmem/internal/errs"
)

// TestMemberDiedBeforeSealing: two processes of a world of three see each
// other, then one dies (its gossip stops without a departure) before any
// table could be sealed. The survivor waited for its whole FormTimeout
// (60 s by default) and then reported "saw 2 of 3 processes"; it now
// fails once gossip declares the dead one dead and nobody took its place,
// with ErrPEFailed naming it. The FormTimeout of 5 minutes leaves the old
// behaviour to the test binary's own deadline.
func TestMemberDiedBeforeSealing(t *testing.T) {
	t.Parallel()
	log, _ := quietLogger()
	cfgs := job(t, 2, 3, log)
	seen := make([]chan struct{}, len(cfgs))
	for i := range cfgs {
		cfgs[i].Name = []string{"survivor", "victim"}[i]
		cfgs[i].FormTimeout = 5 * time.Minute
		seen[i] = make(chan struct{})
		var once sync.Once
		cfgs[i].onPeer = func(string) { once.Do(func() { close(seen[i]) }) }
	}
	type result struct {
		w   *World
		err error
	}
	survivor := make(chan result, 1)
	go func() {
		w, err := Form(context.Background(), cfgs[0])
		survivor <- result{w, err}
	}()
	ctx, kill := context.WithCancel(context.Background())
	defer kill()
	victim := make(chan error, 1)
	go func() {
		_, err := Form(ctx, cfgs[1])
		victim <- err
	}()
	<-seen[0]
	<-seen[1]
	kill()
	if err := <-victim; !errors.Is(err, context.Canceled) {
		t.Fatalf("victim: %v, want its cancellation", err)
	}
	r := <-survivor
	if r.w != nil {
		r.w.Close()
		t.Fatal("the survivor formed a world of 3 with 2 processes")
	}
	err := r.err
	if !errors.Is(err, errs.ErrPEFailed) || !errors.Is(err, errs.ErrBootstrap) || errors.Is(err, errs.ErrTimeout) {
		t.Fatalf("survivor: %v, want ErrPEFailed and ErrBootstrap, not ErrTimeout", err)
	}
	for _, want := range []string{"victim at 127.0.0.1:", "died before the world was sealed", "saw 2 of 3 processes (survivor victim)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("survivor's error %q does not say %q", err, want)
		}
	}
}

// TestLostOnlyWhileHoldingAPlace: a dead peer is lost while it holds a
// place in the view's table, whether the view is complete or not, and no
// longer once a live process takes the place, or it is seen alive again.
func TestLostOnlyWhileHoldingAPlace(t *testing.T) {
	n := fakeNode(t, "a", 1, 3)
	see(n, "b", 2)
	if res := n.step(false); len(res.lost) != 0 {
		t.Fatalf("nobody dead, lost %q", names(res.lost))
	}
	n.down["b"] = true
	if res := n.step(false); names(res.lost) != "b" || res.err != nil {
		t.Fatalf("b dead in an incomplete view: lost %q (%v), want b", names(res.lost), res.err)
	}
	see(n, "c", 3)
	if res := n.step(false); names(res.lost) != "b" {
		t.Fatalf("b dead in a complete view: lost %q, want b", names(res.lost))
	}
	if err := n.lostError(n.lostLocked(), time.Second); !strings.Contains(err.Error(), "rank 1 (b at "+addrOf("b")+")") {
		t.Fatalf("error %q does not name b's rank in the table", err)
	}
	see(n, "d", 4) // restarted in b's place
	if res := n.step(false); len(res.lost) != 0 {
		t.Fatalf("d took b's place, yet lost %q", names(res.lost))
	}
	delete(n.peers, "d")
	delete(n.down, "b") // b refuted its death
	if res := n.step(false); len(res.lost) != 0 {
		t.Fatalf("b alive again, yet lost %q", names(res.lost))
	}
}
