package world

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/goshmem/shmem/actors"
	"github.com/goshmem/shmem/internal/actorsys"
	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/internal/netprobe"
)

// lossLog is what start-up waits on besides its answers: the failures
// this PE detected (control.detected). Before the PE actor runs, nothing
// else hears of them on a PE other than rank 0, so a start-up step that
// waits on a peer (rank 0's coordinator, a peer's segment) asks here, and
// ends with that peer's failure instead of at Init's timeout.
type lossLog struct {
	mu     sync.Mutex
	lost   map[int]string
	order  []int         // the ranks of lost, as found
	signal chan struct{} // closed and replaced at each loss
	// aborted holds the ranks that closed after a failure of their own
	// (lane.AbortReason), also when another reason came first: a PE
	// whose Init failed exits, and its ended process may be found before
	// its abort is read.
	aborted map[int]bool
}

// add records rank's failure, the first reason kept, and that it
// aborted whenever reason says so.
func (l *lossLog) add(rank int, reason string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lost == nil {
		l.lost, l.aborted = map[int]string{}, map[int]bool{}
	}
	_, known := l.lost[rank]
	newAbort := isAbort(reason) && !l.aborted[rank]
	if newAbort {
		l.aborted[rank] = true
	}
	if !known {
		l.lost[rank] = reason
		l.order = append(l.order, rank)
	}
	if (!known || newAbort) && l.signal != nil {
		close(l.signal)
		l.signal = nil
	}
}

// abortedRank reports whether rank closed after a failure of its own.
func (l *lossLog) abortedRank(rank int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.aborted[rank]
}

// of returns the reason rank was found failed, if it was.
func (l *lossLog) of(rank int) (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	why, ok := l.lost[rank]
	return why, ok
}

// firstCause returns the first rank found failed for a reason of its own
// (that did not abort), if any.
func (l *lossLog) firstCause() (int, string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.order {
		if !l.aborted[r] {
			return r, l.lost[r], true
		}
	}
	return 0, "", false
}

// changed returns a channel closed at the next loss.
func (l *lossLog) changed() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.signal == nil {
		l.signal = make(chan struct{})
	}
	return l.signal
}

// lostErr is Init's error for a peer found failed during start-up (why).
// A peer that only closed after a failure of its own is not the cause
// when another is known: a PE found failed for a reason of its own, or a
// same-host process that has ended; that one is named.
func (j *joiner) lostErr(rank int, during, why string) error {
	if isAbort(why) || j.ctl.loss.abortedRank(rank) {
		if r, w, ok := j.primaryCause(); ok {
			rank, why = r, w
		}
	}
	return errs.New("Init", j.cfg.Rank, rank, errs.ErrPEFailed, "PE %d failed %s: %s", rank, during, why)
}

// primaryCause is the failure that made PEs close after a failure of
// their own, if this PE can find it: a PE found failed for a reason of
// its own, or a same-host process that has ended.
func (j *joiner) primaryCause() (int, string, bool) {
	if r, w, ok := j.ctl.loss.firstCause(); ok {
		return r, w, true
	}
	return j.endedCause()
}

// blameInit renames an Init agreement's ErrPEFailed that names a PE
// which only closed after a failure of its own (the coordinator aborted
// the round on its abort, before hearing of the failure that caused it)
// to the primary cause, when this PE finds one.
func (j *joiner) blameInit(err error) error {
	var e *errs.Error
	if !errors.Is(err, errs.ErrPEFailed) || !errors.As(err, &e) || !isAbort(e.Detail) {
		return err
	}
	r, why, ok := j.primaryCause()
	if !ok || r == e.Target {
		return err
	}
	return errs.New("Init", j.cfg.Rank, r, errs.ErrPEFailed, "PE %d failed: %s (then PE %d closed after a failure of its own: %s)", r, why, e.Target, e.Detail)
}

// endedProcess returns a same-host PE whose process has ended, if any,
// but not one found closing after a failure of its own: it exits too,
// after the failure it followed (rank 0 aborting after a kill of PE 2
// was named instead of PE 2).
func (j *joiner) endedProcess() (int, bool) {
	if j.cfg.HostID != "" {
		return 0, false
	}
	for r, rec := range j.recs {
		if r == j.cfg.Rank || rec.Host != j.hostID {
			continue
		}
		if j.ctl.loss.abortedRank(r) {
			continue
		}
		if netprobe.ProcessGone(rec.PID) {
			return r, true
		}
	}
	return 0, false
}

// answerGrace bounds how long a PE that found rank 0 gone still waits
// for the answer rank 0 may have sent before it ended.
const answerGrace = 250 * time.Millisecond

// watchEvery is how often a PE waiting for a start-up agreement checks
// that the same-host PEs it waits on still run (watch: a system call
// each); netEvery how often it probes the others' listeners.
const (
	watchEvery = 20 * time.Millisecond
	netEvery   = 100 * time.Millisecond
)

// gatherAtZero runs a start-up agreement at rank 0's coordinator and
// ends it when a PE it waits on is found failed. Rank 0 hears of every
// failure it detects at its own coordinator, which aborts the round for
// every member; another PE also ends when it finds rank 0 itself failed,
// which no coordinator would tell it. A PE that dies before its control
// link is up is found by watch.
func (j *joiner) gatherAtZero(g *actors.Gather) ([][]byte, error) {
	c := &j.cfg
	answer, stop, err := actorsys.StartGather(j.ctl.sys.Root, coordinatorPID(), g, nil)
	if err != nil {
		return nil, j.fail(errs.ErrBootstrap, "%v", err)
	}
	defer stop()
	timer := time.NewTimer(c.Timeout)
	defer timer.Stop()
	// The watch probes the network: in a goroutine of its own, so that a
	// probe of a live peer never delays the answer.
	quit, watched := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watched)
		tick := time.NewTicker(watchEvery)
		defer tick.Stop()
		for n, next := 0, 0; ; n++ {
			select {
			case <-quit:
				return
			case <-tick.C:
				next = j.watch(next, n%int(netEvery/watchEvery) == 0, quit)
			}
		}
	}()
	defer func() { close(quit); <-watched }()
	for {
		lost := j.ctl.loss.changed()
		if why, ok := j.ctl.loss.of(0); ok && c.Rank != 0 {
			return j.rankZeroLost(answer, g, why)
		}
		select {
		case r := <-answer:
			return actorsys.Result(r, g.N, "Init", c.Rank)
		case <-lost:
		case <-timer.C:
			return nil, errs.New("Init", c.Rank, errs.NoPE, errs.ErrTimeout, "no agreement from the coordinator within %v", c.Timeout)
		}
	}
}

// rankZeroLost ends a start-up agreement of a PE that found rank 0 gone
// (why). Rank 0 may have ended right after answering (aborting the round
// naming the PE that failed): its answer, sent before it ended, names the
// right PE, so it is waited for answerGrace. Found by its ended process,
// rank 0 may also turn out to have aborted (its abort is read on the
// lane): lostErr then names the failure it followed, which made it abort
// (the fault suite blamed rank 0, which had aborted after PE 2's kill).
func (j *joiner) rankZeroLost(answer <-chan *actors.GatherReply, g *actors.Gather, why string) ([][]byte, error) {
	c := &j.cfg
	grace := time.NewTimer(answerGrace)
	defer grace.Stop()
wait:
	for {
		changed := j.ctl.loss.changed()
		if j.ctl.loss.abortedRank(0) {
			break
		}
		select {
		case r := <-answer:
			return actorsys.Result(r, g.N, "Init", c.Rank)
		case <-changed:
		case <-grace.C:
			break wait
		}
	}
	select {
	case r := <-answer: // sent before the abort, it may be read after it
		return actorsys.Result(r, g.N, "Init", c.Rank)
	default:
	}
	return nil, j.lostErr(0, "while this PE waited for its "+g.Domain+" agreement", why)
}

// watchNet bounds the network probes of one watch: the processes of this
// host are checked all at once (a system call each), remote PEs a few a
// tick, round robin from next.
const watchNet = 4

// watch checks that the PEs this one waits on in a start-up agreement
// still run (rank 0 waits on every PE, the others on rank 0) and reports
// one that has ended as detected (control.detected): its process is gone
// (same host), or its control listener refuses or resets connections.
// Remote PEs are probed only when network is set. It returns where the
// next round robin of network probes starts, and stops probing once quit
// is closed.
func (j *joiner) watch(next int, network bool, quit <-chan struct{}) int {
	c := &j.cfg
	// local: a process this PE can see (SHMEM_HOST_ID may group PEs of
	// other PID namespaces).
	local := func(rec record) bool { return rec.Host == j.hostID && c.HostID == "" }
	check := func(r int) {
		select {
		case <-quit: // the wait is over: probe no more
			return
		default:
		}
		if r == c.Rank {
			return
		}
		if _, ok := j.ctl.loss.of(r); ok {
			return
		}
		rec := j.recs[r]
		if local(rec) {
			if netprobe.ProcessGone(rec.PID) {
				j.ctl.detected(r, fmt.Sprintf("its process (pid %d) ended during start-up", rec.PID))
			}
			return
		}
		if network && netprobe.ListenerGone(rec.Control, netEvery/2) {
			j.ctl.detected(r, fmt.Sprintf("its control listener at %s is gone: its process ended during start-up", rec.Control))
		}
	}
	if c.Rank != 0 {
		check(0)
		return 0
	}
	for r := range j.recs {
		if local(j.recs[r]) {
			check(r)
		}
	}
	for n, i := 0, 0; network && n < watchNet && i < len(j.recs); i++ {
		r := (next + i) % len(j.recs)
		if !local(j.recs[r]) {
			check(r)
			n++
		}
		next = r + 1
	}
	return next
}

// peerGone says whether same-host PE rank, whose segment this PE waits
// for, has failed: its control link was lost, or its process (pid) has
// ended. The process check is skipped when SHMEM_HOST_ID groups the PEs
// (Config.HostID): they may then live in other PID namespaces, where
// this PE cannot see their processes.
func (j *joiner) peerGone(rank, pid int) error {
	if why, ok := j.ctl.loss.of(rank); ok {
		return j.lostErr(rank, "before this PE mapped its heap", why)
	}
	if j.cfg.HostID == "" && netprobe.ProcessGone(pid) {
		return j.lostErr(rank, "before this PE mapped its heap", fmt.Sprintf("its process (pid %d) has ended", pid))
	}
	return nil
}
