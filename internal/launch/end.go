package launch

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"github.com/goshmem/shmem/internal/errs"
)

// End is how one PE's process ended.
type End struct {
	Rank int
	Pid  int
	// Code is the exit status, or -1 when a signal killed the process.
	Code int
	// Signal is the signal that killed the process; 0 when it exited.
	Signal syscall.Signal
}

// Failed reports whether the PE ended badly: a non-zero status or a signal.
func (e End) Failed() bool { return e.Signal != 0 || e.Code != 0 }

// Status is the shell-style status of the end: the exit code, or 128 plus
// the signal number.
func (e End) Status() int {
	if e.Signal != 0 {
		return 128 + int(e.Signal)
	}
	return e.Code
}

func (e End) String() string {
	if e.Signal != 0 {
		return fmt.Sprintf("PE %d was killed by signal %d (%v)", e.Rank, int(e.Signal), e.Signal)
	}
	return fmt.Sprintf("PE %d exited with status %d", e.Rank, e.Code)
}

// endOf turns a finished command into an End.
func endOf(rank, pid int, ps *os.ProcessState, err error) End {
	if ps == nil {
		return End{Rank: rank, Pid: pid, Code: 1}
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return End{Rank: rank, Pid: pid, Code: -1, Signal: ws.Signal()}
	}
	code := ps.ExitCode()
	if code == 0 && err != nil && !errors.Is(err, exec.ErrWaitDelay) {
		code = 1
	}
	return End{Rank: rank, Pid: pid, Code: code}
}

// Result is how a job ended.
type Result struct {
	// Ends holds every started PE's end, in the order of Config.Ranks
	// (rank order by default).
	Ends []End
	// First is the first PE to fail, in the order the ends arrived, or
	// nil when none did: the job's failure, as later ones are often its
	// consequences (PEs stopped, survivors reporting the failure).
	First *End
	// LeftEarly are the PEs that exited 0 while others still ran, before
	// any failed: when the job then fails, they are its likely cause (a
	// PE that ends without Finalize, or finalizes early, makes the others'
	// collectives fail), though First names a survivor.
	LeftEarly []End
	// TimedOut is set when Config.Timeout stopped the job.
	TimedOut bool
	// Signal is the first signal forwarded from Config.Signals, or nil.
	Signal os.Signal
}

// Status is the job's shell-style exit status: the first failure's, else 0.
func (r Result) Status() int {
	if r.First == nil {
		return 0
	}
	return r.First.Status()
}

// Err describes the job's failure: nil when every PE exited 0; else it
// names the first PE that failed and wraps errs.ErrTimeout when the job
// ran out of time, errs.ErrPEFailed otherwise.
func (r Result) Err() error {
	switch {
	case r.TimedOut:
		return fmt.Errorf("launch: job stopped after its timeout: %w", errs.ErrTimeout)
	case r.First == nil:
		return nil
	}
	return fmt.Errorf("launch: %v%s: %w", r.First, r.EarlyNote(), errs.ErrPEFailed)
}

// EarlyNote is what a failure message adds about LeftEarly: "" when no PE
// left early, else a clause naming them.
func (r Result) EarlyNote() string {
	if r.First == nil || len(r.LeftEarly) == 0 {
		return ""
	}
	ranks := make([]string, len(r.LeftEarly))
	for i, e := range r.LeftEarly {
		ranks[i] = strconv.Itoa(e.Rank)
	}
	// The exits of a PE that left early and of the PE its leaving failed
	// can be heard in either order (the settle window), so the note says
	// what may have happened, not what did.
	return fmt.Sprintf(" (PE %s had exited with status 0 while the others ran, or as the failure began: a PE that returns without Finalize, or finalizes early, fails the others' collectives)",
		strings.Join(ranks, ", "))
}

// tally aggregates PE ends in the order they arrive. It is a pure state
// machine; the supervisor does the stopping it asks for.
type tally struct {
	n, ended int
	first    *End
	early    []End // exited 0 before any failure, while others ran
	// settling is set from the first failure until the supervisor stops
	// the others (settleWindow): a PE that exits 0 then counts as early,
	// since its end may have come first although it is heard later.
	settling bool
}

// record notes one PE's end and reports whether it is the first failure
// with PEs left to stop: true at most once.
func (t *tally) record(e End) (firstFailure bool) {
	t.ended++
	if !e.Failed() && (t.first == nil && t.ended < t.n || t.settling) {
		t.early = append(t.early, e)
	}
	if e.Failed() && t.first == nil {
		t.first = &e
		return t.ended < t.n
	}
	return false
}

// done reports whether every PE has ended.
func (t *tally) done() bool { return t.ended >= t.n }
