package world

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/goshmem/shmem/actors"
	"github.com/goshmem/shmem/internal/errs"
)

// rankZeroRule is the requirement the control plane puts on the network,
// as errors state it. Rank 0 runs the coordinator every agreement goes
// through and relays control messages between PEs that cannot connect,
// so rank 0 and every PE must connect to each other directly; only the
// traffic between two other PEs can be relayed.
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
// and stays up until the PEs it reaches have had that answer (they leave
// when their Init fails), at most lingerOnExit. It returns rank 0's own
// error.
func (j *joiner) abortRoutes(recs []record, missing []int) error {
	addrs := make([]string, len(missing))
	for i, r := range missing {
		addrs[i] = fmt.Sprintf("PE %d at %s", r, recs[r].Control)
	}
	var waiting []int
	for r := 1; r < len(recs); r++ {
		if !slices.Contains(missing, r) {
			waiting = append(waiting, r)
		}
	}
	for i, r := range missing {
		reason := fmt.Sprintf("rank 0 cannot connect to the control plane of %s; %s", addrs[i], rankZeroRule)
		j.ctl.sys.Root.Send(coordinatorPID(), &actors.PEFailed{Rank: r, Reason: reason})
	}
	j.ctl.lane.AwaitGoneOf(waiting, lingerOnExit)
	return errs.New("Init", 0, missing[0], errs.ErrBootstrap, "cannot connect to the control plane of %s: %s",
		strings.Join(addrs, ", "), rankZeroRule)
}

// routesFailed explains a failed route agreement. An abort by rank 0
// (abortRoutes) names the PE rank 0 cannot reach; a timeout means rank 0's
// answer never came.
func (j *joiner) routesFailed(recs []record, err error) error {
	var e *errs.Error
	if !errors.As(err, &e) {
		return err
	}
	switch {
	case errors.Is(err, errs.ErrPEFailed) && strings.Contains(e.Detail, rankZeroRule):
		// rank 0 aborted the round: it cannot reach that PE (abortRoutes).
		return errs.New("Init", j.cfg.Rank, e.Target, errs.ErrBootstrap, "route agreement aborted: %s", e.Detail)
	case errors.Is(err, errs.ErrPEFailed):
		// A PE failed while the routes were agreed: that is its failure.
		return j.blameInit(errs.New("Init", j.cfg.Rank, e.Target, errs.ErrPEFailed, "route agreement aborted: %s", e.Detail))
	case errors.Is(err, errs.ErrTimeout):
		return errs.New("Init", j.cfg.Rank, 0, errs.ErrTimeout, "%s; rank 0 (at %s) did not answer this PE (at %s): %s",
			e.Detail, recs[0].Control, recs[j.cfg.Rank].Control, rankZeroRule)
	}
	return err
}
