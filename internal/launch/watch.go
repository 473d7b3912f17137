package launch

import (
	"syscall"
	"time"
)

// settleWindow is how long the supervisor keeps listening after the first
// failure before it stops the other PEs. The ends of PEs are heard in the
// order their waiting goroutines run and their processes finish exiting,
// not in the order they quit: a PE that returned without Finalize can be
// heard after the survivor that its leaving failed (the survivor saw its
// sockets close while its process was still exiting). Ends heard in the
// window that are clean (status 0) and unfinalized name the PEs that left
// early (tally).
const settleWindow = 200 * time.Millisecond

// quitWait is how long QuitOnTimeout gives PEs to print their stacks.
const quitWait = 2 * time.Second

// watch collects the PEs' ends, forwarding signals, stopping the others
// settleWindow after the first failure (KillOnFailure), at the timeout or
// on Kill, and
// killing after the grace period whatever a stop left running. It runs on
// the supervisor's goroutine and returns once every PE has ended.
func (j *Job) watch(events <-chan event) Result {
	c := &j.cfg
	var res Result
	t := tally{n: len(j.procs)}
	var grace, timeout, settled, quit <-chan time.Time
	if c.Timeout > 0 {
		tm := time.NewTimer(c.Timeout)
		defer tm.Stop()
		timeout = tm.C
	}
	killc, sigs := j.killc, c.Signals
	stopping := false
	stop := func(sig syscall.Signal) {
		t.stopped = true
		for _, p := range j.procs {
			_ = p.signal(sig)
		}
		if !stopping {
			stopping = true
			if sig != syscall.SIGKILL {
				grace = time.After(c.Grace)
			}
		}
	}
	for !t.done() {
		select {
		case ev := <-events:
			if ev.end == nil {
				t.note(ev.rank, ev.report)
				continue
			}
			e := *ev.end
			if c.Verbose {
				j.logf("%v", e)
			}
			if t.record(e) && !stopping {
				t.settling = true
				settled = time.After(settleWindow)
			}
		case <-settled:
			settled, t.settling = nil, false
			if c.KillOnFailure && !stopping {
				j.logf("%s; stopping the other PEs", t.result().cause())
				stop(syscall.SIGTERM)
			}
		case sig := <-sigs:
			if sig == syscall.SIGQUIT {
				// A request for the PEs' hang reports (SHMEM_HANG_REPORT):
				// passed on, and the job goes on.
				j.logf("%v: asking every PE for its hang report", sig)
				for _, p := range j.procs {
					_ = p.signal(syscall.SIGQUIT)
				}
				continue
			}
			if res.Signal == nil {
				res.Signal = sig
			}
			if stopping {
				// A second interrupt: the user wants out now.
				stop(syscall.SIGKILL)
				continue
			}
			j.logf("%v: forwarding to the PEs", sig)
			ss, ok := sig.(syscall.Signal)
			if !ok {
				ss = syscall.SIGTERM
			}
			stop(ss)
		case <-timeout:
			timeout = nil
			res.TimedOut = true
			if c.QuitOnTimeout {
				j.logf("job still running after %v: asking its PEs for their stacks (SIGQUIT)", c.Timeout)
				for _, p := range j.procs {
					_ = p.signal(syscall.SIGQUIT)
				}
				quit = time.After(quitWait)
				continue
			}
			j.logf("job still running after %v: stopping its PEs", c.Timeout)
			stop(syscall.SIGTERM)
		case <-quit:
			quit = nil
			stop(syscall.SIGTERM)
		case <-killc:
			killc = nil
			stop(syscall.SIGKILL)
		case <-grace:
			grace = nil
			for _, p := range j.procs {
				if p.signal(syscall.SIGKILL) == nil {
					j.logf("PE %d still running after %v: killing it", p.rank, c.Grace)
				}
			}
		}
	}
	tr := t.result()
	res.First, res.FinalizedEarly, res.GlobalExit, res.LeftEarly = tr.First, tr.FinalizedEarly, tr.GlobalExit, tr.LeftEarly
	for _, p := range j.procs {
		res.Ends = append(res.Ends, p.end)
	}
	return res
}
