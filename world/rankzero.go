package world

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/remote"

	"github.com/goshmem/shmem/actors"
	"github.com/goshmem/shmem/internal/errs"
)

// rankZeroRule is the requirement the control plane puts on the network,
// as errors state it. Rank 0 runs the coordinator every agreement goes
// through (the coordinator answers by connecting back to the asker) and
// forwards GlobalExit notices, so rank 0 and every PE must connect to each
// other directly; only the data path between two other PEs can be relayed.
const rankZeroRule = "rank 0 and every PE must connect to each other directly (only data traffic between other PEs can be relayed)"

// unreachedRanks lists the ranks whose probe failed, ascending.
func unreachedRanks(reached []bool) []int {
	var out []int
	for r, ok := range reached {
		if !ok {
			out = append(out, r)
		}
	}
	return out
}

// abortRoutes is rank 0's answer to peers it cannot connect to: it aborts
// the route agreement at its coordinator, so that every other PE's Init
// fails at once naming them instead of waiting out the start-up timeout,
// and stays up until the PEs it reaches have had that answer (they
// disconnect when their Init fails), at most lingerOnExit. It returns
// rank 0's own error.
func (j *joiner) abortRoutes(recs []record, missing []int) error {
	addrs := make([]string, len(missing))
	for i, r := range missing {
		addrs[i] = fmt.Sprintf("PE %d at %s", r, recs[r].Actor)
	}
	// Subscribe before the answers go out, so that no disconnect is missed.
	waiting := map[string]bool{}
	for r, rec := range recs {
		if r != 0 && !slices.Contains(missing, r) {
			waiting[rec.Actor] = true
		}
	}
	var mu sync.Mutex // events are published on the goroutines that see them
	done := make(chan struct{})
	if len(waiting) == 0 {
		close(done)
	}
	sub := j.sys.EventStream.Subscribe(func(evt any) {
		e, ok := evt.(*remote.EndpointTerminatedEvent)
		if !ok {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if waiting[e.Address] {
			delete(waiting, e.Address)
			if len(waiting) == 0 {
				close(done)
			}
		}
	})
	defer j.sys.EventStream.Unsubscribe(sub)
	for i, r := range missing {
		reason := fmt.Sprintf("rank 0 cannot connect to the control plane of %s; %s", addrs[i], rankZeroRule)
		if env, err := actors.Wrap(&actors.PEFailed{Rank: r, Reason: reason}); err == nil {
			j.sys.Root.Send(coordinatorPID(recs), env)
		}
	}
	select {
	case <-done:
	case <-time.After(lingerOnExit):
	}
	return errs.New("Init", 0, missing[0], errs.ErrBootstrap, "cannot connect to the control plane of %s: %s",
		strings.Join(addrs, ", "), rankZeroRule)
}

// routesFailed explains a failed route agreement. An abort by rank 0
// (abortRoutes) names the PE rank 0 cannot reach; a timeout may mean that
// rank 0 cannot connect back to this PE, since its answer never came.
func (j *joiner) routesFailed(recs []record, err error) error {
	var e *errs.Error
	if !errors.As(err, &e) {
		return err
	}
	switch {
	case errors.Is(err, errs.ErrPEFailed):
		return errs.New("Init", j.cfg.Rank, e.Target, errs.ErrBootstrap, "route agreement aborted: %s", e.Detail)
	case errors.Is(err, errs.ErrTimeout):
		return errs.New("Init", j.cfg.Rank, 0, errs.ErrTimeout, "%s; if rank 0 (at %s) cannot connect to this PE's control plane (at %s), its answer never comes: %s",
			e.Detail, recs[0].Actor, recs[j.cfg.Rank].Actor, rankZeroRule)
	}
	return err
}
