package world

import (
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/goshmem/shmem/actors"
	"github.com/goshmem/shmem/internal/errs"
)

// lossLog is what start-up waits on besides its answers: the failures
// this PE detected (control.detected). Before the PE actor runs, nothing
// else hears of them on a PE other than rank 0, so a start-up step that
// waits on a peer (rank 0's coordinator, a peer's segment) asks here, and
// ends with that peer's failure instead of at Init's timeout.
type lossLog struct {
	mu     sync.Mutex
	lost   map[int]string
	signal chan struct{} // closed and replaced at each loss
}

// add records rank's failure, the first reason kept.
func (l *lossLog) add(rank int, reason string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lost == nil {
		l.lost = map[int]string{}
	}
	if _, ok := l.lost[rank]; ok {
		return
	}
	l.lost[rank] = reason
	if l.signal != nil {
		close(l.signal)
		l.signal = nil
	}
}

// of returns the reason rank was found failed, if it was.
func (l *lossLog) of(rank int) (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	why, ok := l.lost[rank]
	return why, ok
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

// lostErr is Init's error for a peer found failed during start-up.
func (j *joiner) lostErr(rank int, during, why string) error {
	return errs.New("Init", j.cfg.Rank, rank, errs.ErrPEFailed, "PE %d failed %s: %s", rank, during, why)
}

// gatherAtZero runs a start-up agreement at rank 0's coordinator. Rank 0
// hears of every failure it detects at its own coordinator, which aborts
// the round; another PE also ends when it finds rank 0 itself failed
// (its control link lost), which no coordinator would tell it.
func (j *joiner) gatherAtZero(g *actors.Gather) ([][]byte, error) {
	c := &j.cfg
	if c.Rank == 0 {
		return actors.RunGather(j.ctl.sys.Root, coordinatorPID(), g, c.Timeout, "Init", c.Rank)
	}
	answer, stop, err := actors.StartGather(j.ctl.sys.Root, coordinatorPID(), g, nil)
	if err != nil {
		return nil, j.fail(errs.ErrBootstrap, "%v", err)
	}
	defer stop()
	timer := time.NewTimer(c.Timeout)
	defer timer.Stop()
	for {
		lost := j.ctl.loss.changed()
		if why, ok := j.ctl.loss.of(0); ok {
			return nil, j.lostErr(0, "while this PE waited for its "+g.Domain+" agreement", why)
		}
		select {
		case r := <-answer:
			return actors.Result(r, g.N, "Init", c.Rank)
		case <-lost:
		case <-timer.C:
			return nil, errs.New("Init", c.Rank, errs.NoPE, errs.ErrTimeout, "no agreement from the coordinator within %v", c.Timeout)
		}
	}
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
	if j.cfg.HostID == "" && pid > 0 && errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return j.lostErr(rank, "before this PE mapped its heap", fmt.Sprintf("its process (pid %d) has ended", pid))
	}
	return nil
}
