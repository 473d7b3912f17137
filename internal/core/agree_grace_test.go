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

// heldAgreement starts an agreement of PEs 0 and 1 on PE me of a world
// whose coordinator holds the contribution until the test answers it, and
// records the other PE's failure on it (that PE passed the agreement and
// exited, its answer having come first). It returns the sender to answer,
// the channel the result arrives on, and one that is closed if PE me
// kept waiting after it recorded the failure.
func heldAgreement(t *testing.T, me int) (*PE, *actor.PID, chan agreeResult, chan struct{}) {
	t.Helper()
	gathered := make(chan *actor.PID, 1)
	w := newFakeWorldWith(t, 2, func(c *Config) {
		if c.Rank == me {
			c.Coordinator = c.System.Root.Spawn(actor.PropsFromFunc(func(ctx actor.Context) {
				if _, ok := ctx.Message().(*actors.Gather); ok {
					gathered <- ctx.Sender()
				}
			}))
		}
	})
	p := w.pes[me]
	kept := make(chan struct{})
	var once sync.Once
	p.s.agreeSleeps = func(time.Duration) {
		if p.s.nFailed.Load() != 0 {
			once.Do(func() { close(kept) })
		}
	}
	done := make(chan agreeResult, 1)
	go func() {
		all, err := p.Agree("test_agree", "test", 1, []int{0, 1}, me, []byte{7})
		done <- agreeResult{all, err}
	}()
	from := <-gathered
	p.s.deliver(&actors.PEFailed{Rank: 1 - me, Reason: "test: it passed the agreement and exited"})
	return p, from, done, kept
}

// keptWaiting fails the test if the agreement ended before its PE kept
// waiting past the recorded failure.
func keptWaiting(t *testing.T, done chan agreeResult, kept chan struct{}) {
	t.Helper()
	select {
	case r := <-done:
		t.Fatalf("the agreement ended (%v, %v) before the coordinator answered", r.all, r.err)
	case <-kept:
	}
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
	p, from, done, kept := heldAgreement(t, 0)
	keptWaiting(t, done, kept)
	p.s.cfg.System.Root.Send(from, &actors.GatherReply{Payloads: [][]byte{{7}, {8}}, Failed: -1})
	r := <-done
	if r.err != nil || len(r.all) != 2 || r.all[0][0] != 7 || r.all[1][0] != 8 {
		t.Fatalf("agreement = %v, %v; want [[7] [8]], nil", r.all, r.err)
	}
}

// TestAgreementAbortedAfterAPeerFailed: when the coordinator aborts the
// round for the failure, the waiting PE returns the abort.
func TestAgreementAbortedAfterAPeerFailed(t *testing.T) {
	p, from, done, kept := heldAgreement(t, 0)
	keptWaiting(t, done, kept)
	p.s.cfg.System.Root.Send(from, &actors.GatherReply{Err: "PE 1 failed", Failed: 1})
	r := <-done
	if !errors.Is(r.err, errs.ErrPEFailed) {
		t.Fatalf("agreement = %v, %v; want ErrPEFailed", r.all, r.err)
	}
}

// TestAgreementEndsWhenTheCoordinatorFailed: the coordinator runs on rank
// 0; once rank 0 is recorded failed nobody will answer, and an agreement
// ends at once with the failure, without a grace (a kill -9 of rank 0
// ends pending agreements at once).
func TestAgreementEndsWhenTheCoordinatorFailed(t *testing.T) {
	_, _, done, kept := heldAgreement(t, 1)
	r := <-done
	var e *errs.Error
	if !errors.Is(r.err, errs.ErrPEFailed) || !errors.As(r.err, &e) || e.Target != 0 {
		t.Fatalf("agreement = %v, %v; want ErrPEFailed naming PE 0", r.all, r.err)
	}
	select {
	case <-kept:
		t.Error("the agreement waited for an answer after the coordinator's PE failed")
	default:
	}
}
