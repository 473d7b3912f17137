package core

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/goshmem/shmem/actors"
	"github.com/goshmem/shmem/internal/errs"
)

// heldAgreement starts an agreement of PEs 0 and 1 on PE 0 of a world
// whose coordinator holds PE 0's contribution until the test answers it,
// records PE 1's failure on PE 0 (PE 1 passed the agreement and exited,
// its answer having come first), and returns once PE 0 has seen the
// failure and kept waiting, with the sender to answer and the channel
// PE 0's result arrives on. If PE 0 gives up instead, the test fails.
func heldAgreement(t *testing.T) (*PE, *actor.PID, chan agreeResult) {
	t.Helper()
	gathered := make(chan *actor.PID, 1)
	w := newFakeWorldWith(t, 2, func(c *Config) {
		if c.Rank == 0 {
			c.Coordinator = c.System.Root.Spawn(actor.PropsFromFunc(func(ctx actor.Context) {
				if _, ok := ctx.Message().(*actors.Gather); ok {
					gathered <- ctx.Sender()
				}
			}))
		}
	})
	p := w.pes[0]
	kept := make(chan struct{})
	var once sync.Once
	p.s.agreeSleeps = func(time.Duration) {
		if p.s.nFailed.Load() != 0 {
			once.Do(func() { close(kept) })
		}
	}
	done := make(chan agreeResult, 1)
	go func() {
		all, err := p.Agree("test_agree", "test", 1, []int{0, 1}, 0, []byte{7})
		done <- agreeResult{all, err}
	}()
	from := <-gathered
	p.s.deliver(&actors.PEFailed{Rank: 1, Reason: "test: it passed the agreement and exited"})
	select {
	case r := <-done:
		t.Fatalf("the agreement ended (%v, %v) before the coordinator answered", r.all, r.err)
	case <-kept:
	}
	return p, from, done
}

type agreeResult struct {
	all [][]byte
	err error
}

// TestAgreementAnsweredAfterAPeerLeft: a peer's failure recorded while
// this PE waits in an agreement does not end the wait before the
// coordinator, which decides the round, answers: a member answered first
// may leave (Finalize, then exit) while this PE's answer is on its way,
// and the round it completed must complete here too.
func TestAgreementAnsweredAfterAPeerLeft(t *testing.T) {
	p, from, done := heldAgreement(t)
	p.s.cfg.System.Root.Send(from, &actors.GatherReply{Payloads: [][]byte{{7}, {8}}, Failed: -1})
	r := <-done
	if r.err != nil || len(r.all) != 2 || r.all[0][0] != 7 || r.all[1][0] != 8 {
		t.Fatalf("agreement = %v, %v; want [[7] [8]], nil", r.all, r.err)
	}
}

// TestAgreementAbortedAfterAPeerFailed: when the coordinator aborts the
// round for the failure, the waiting PE returns the abort.
func TestAgreementAbortedAfterAPeerFailed(t *testing.T) {
	p, from, done := heldAgreement(t)
	p.s.cfg.System.Root.Send(from, &actors.GatherReply{Err: "PE 1 failed", Failed: 1})
	r := <-done
	if !errors.Is(r.err, errs.ErrPEFailed) {
		t.Fatalf("agreement = %v, %v; want ErrPEFailed", r.all, r.err)
	}
}
