package membership

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/memberlist"
)

// outbox sends Form's direct messages on their own goroutines, so that a
// dial to a stalled or vanished peer (up to memberlist's TCPTimeout) never
// holds up Form's loop, and decides when a report is due again.
type outbox struct {
	n  *node
	ml *memberlist.Memberlist
	wg sync.WaitGroup

	inFlight   atomic.Int32 // reports being sent
	failed     atomic.Bool  // the last report was not delivered
	lastReport time.Time    // when the last report left; loop goroutine only
}

// maxReportsInFlight bounds the reports being sent at once: the current
// leader's, and the old leader's when the table just changed. A report
// beyond it is dropped; the next resend carries the same news.
const maxReportsInFlight = 2

// send launches the delivery of every message of res.
func (o *outbox) send(sends []send) {
	for _, s := range sends {
		isReport := s.m.Kind == kindReport
		if isReport {
			if o.inFlight.Load() >= maxReportsInFlight {
				continue
			}
			o.inFlight.Add(1)
			o.lastReport = time.Now()
		}
		o.wg.Go(func() {
			err := o.n.deliver(o.ml, s)
			if isReport {
				o.failed.Store(err != nil)
				o.inFlight.Add(-1)
			}
		})
	}
}

// reportDue says whether a member should repeat its report on this tick:
// at once after a failed delivery, else every PushPullInterval. A delivered
// report needs no quick repeat (the stream is reliable and the leader keeps
// it); the slow repeat covers a seal that was lost on its way back.
func (o *outbox) reportDue() bool {
	return o.failed.Load() || time.Since(o.lastReport) >= o.n.cfg.PushPullInterval
}

// wait returns once every message launched has been sent or has failed.
func (o *outbox) wait() { o.wg.Wait() }
