package world

// onGlobalExit wraps the caller's handler: before a process that sent
// the exit notice ends, the notice must reach every PE, or a PE that saw
// the connection drop first would report a failure instead of the exit.
// The caller sent it to every PE and rank 0 passed it on (rankzero.go), so
// those two wait until the others are gone, rank 0 for all but the caller
// (which waits for rank 0 in turn); every PE but the caller then closes its
// control lane, with a bye on every link, and ends, which is what lets the
// two stop waiting.
func (j *joiner) onGlobalExit() func(origin, status int) {
	exit := j.cfg.OnGlobalExit
	if exit == nil {
		return nil
	}
	return func(origin, status int) {
		switch j.cfg.Rank {
		case origin:
			// The others exit with status too, and the launcher may hear
			// any of them first: only this report names the caller.
			j.cfg.Status.GlobalExit(status)
			j.ctl.awaitGone(-1, lingerOnExit)
		case 0:
			j.ctl.awaitGone(origin, lingerOnExit)
			fallthrough // the caller, still waiting, hears a bye too
		default:
			// Leave on purpose, with a bye on every link, so that no PE
			// takes this process's end for a failure.
			_ = j.ctl.lane.Close()
		}
		exit(status)
	}
}

// onFailure is core.Config.OnFailure: the control plane's
// (control.onFailure), after telling the launcher the first PE this PE
// recorded failed, so that this PE's own failure, which that one's likely
// caused, is not taken for the job's when the launcher hears it first.
func (j *joiner) onFailure(rank int, reason string, origin int, link bool) {
	j.cfg.Status.PeerFailed(rank)
	j.ctl.onFailure(rank, reason, origin, link)
}
