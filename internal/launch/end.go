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
	"github.com/goshmem/shmem/internal/pestatus"
)

// End is how one PE's process ended.
type End struct {
	Rank int
	Pid  int
	// Code is the exit status, or -1 when a signal killed the process.
	Code int
	// Signal is the signal that killed the process; 0 when it exited.
	Signal syscall.Signal
	// Reported is what the PE said of its run on its status socket
	// (bootstrap.EnvStatusFD) before it ended: zero when it said nothing
	// (a program that does not use goshmem, or one that ended before
	// Init).
	Reported pestatus.Report
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

// String says how the PE ended, and that it had finalized when it ended
// badly after Finalize: its failure then cost the others nothing.
func (e End) String() string {
	after := ""
	if e.Failed() && e.Reported.Finalized {
		after = " after Finalize"
	}
	if e.Signal != 0 {
		return fmt.Sprintf("PE %d was killed by signal %d (%v)%s", e.Rank, int(e.Signal), e.Signal, after)
	}
	return fmt.Sprintf("PE %d exited with status %d%s", e.Rank, e.Code, after)
}

// GlobalExit is a PE's call of GlobalExit, as the PE reported it.
type GlobalExit struct {
	Rank, Status int
}

func (g GlobalExit) String() string {
	return fmt.Sprintf("PE %d called GlobalExit(%d)", g.Rank, g.Status)
}

// ExitCode is the status the PEs exit with: the low 8 bits, as the
// kernel keeps them.
func (g GlobalExit) ExitCode() int { return g.Status & 0xff }

// FinalizedEarly is a PE's Finalize that a peer found while it waited for
// that PE (in a collective, or for a lock it held), as the peer reported
// it: the peer's operation failed, and its failure (First) is the
// consequence.
type FinalizedEarly struct {
	Rank int // the PE that called Finalize
	By   int // the PE whose collective its Finalize failed
}

func (f FinalizedEarly) String() string {
	return fmt.Sprintf("PE %d called Finalize while PE %d waited for it", f.Rank, f.By)
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
	// First is the PE whose failure the job's is, or nil when none
	// failed: the first to fail in the order the ends arrived, as later
	// ones are often its consequences (PEs stopped, survivors reporting
	// the failure); but a PE that reported it had seen another PE fail
	// first gives way to that PE when that PE's failure was heard before
	// the launcher stopped the job, since two exits are heard in either
	// order.
	First *End
	// FinalizedEarly is set when First, or the PE First gave way to,
	// reported that an operation of its failed because another PE called
	// Finalize while it waited for it: that PE is the job's cause, though
	// its own process may have exited 0, or not yet ended.
	FinalizedEarly *FinalizedEarly
	// GlobalExit is the PE that called GlobalExit with a status that
	// fails the job (non-zero in its low 8 bits), as the PE reported it;
	// nil when none did. Every PE then exits with that status, in an order
	// that does not tell which PE called it: this does.
	GlobalExit *GlobalExit
	// LeftEarly are the PEs that exited 0 without having finalized while
	// others still ran, before any failed: when the job then fails, they
	// are its likely cause (a PE that ends without Finalize, or finalizes
	// early, makes the others' collectives fail), though First names a
	// survivor.
	LeftEarly []End
	// TimedOut is set when Config.Timeout stopped the job.
	TimedOut bool
	// Signal is the first signal forwarded from Config.Signals, or nil.
	Signal os.Signal
}

// Status is the job's shell-style exit status: the GlobalExit's, else the
// first failure's, else 0.
func (r Result) Status() int {
	switch {
	case r.GlobalExit != nil:
		return r.GlobalExit.ExitCode()
	case r.First == nil:
		return 0
	}
	return r.First.Status()
}

// Err describes the job's failure: nil when every PE exited 0; else it
// wraps errs.ErrTimeout when the job ran out of time, errs.ErrFinalized
// naming the PE when a GlobalExit ended it (as the PEs' own operations
// report one), errs.ErrPEFailed naming the PE that failed otherwise.
func (r Result) Err() error {
	switch {
	case r.TimedOut:
		return fmt.Errorf("launch: job stopped after its timeout: %w", errs.ErrTimeout)
	case r.GlobalExit != nil:
		return fmt.Errorf("launch: %v: %w", r.GlobalExit, errs.ErrFinalized)
	case r.First == nil:
		return nil
	}
	return fmt.Errorf("launch: %s: %w", r.cause(), errs.ErrPEFailed)
}

// EarlyNote is what a failure message adds about LeftEarly: "" when no PE
// left early (or a GlobalExit ended the job), else a clause naming them.
func (r Result) EarlyNote() string {
	if r.First == nil || r.GlobalExit != nil || r.FinalizedEarly != nil || len(r.LeftEarly) == 0 {
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

// Summary is the line a launcher prints about how the job ended: "job
// ended: PE 2 called GlobalExit(3)", or "job failed: " and First with
// EarlyNote, or the FinalizedEarly that caused First ("job failed: PE 1
// called Finalize while PE 2 waited for it (PE 2 exited with status 1)");
// "" when none of them happened.
func (r Result) Summary() string {
	switch {
	case r.GlobalExit != nil:
		return "job ended: " + r.cause()
	case r.First != nil:
		return "job failed: " + r.cause()
	}
	return ""
}

// cause says what ended the job: the GlobalExit, else the early Finalize
// that failed the first failure, else the failure with its early note; ""
// when neither happened.
func (r Result) cause() string {
	switch {
	case r.GlobalExit != nil:
		return r.GlobalExit.String()
	case r.First == nil:
		return ""
	case r.FinalizedEarly != nil:
		return fmt.Sprintf("%v (%v)", r.FinalizedEarly, r.First)
	}
	return r.First.String() + r.EarlyNote()
}

// tally aggregates PE ends and reports in the order they arrive. It is a
// pure state machine; the supervisor does the stopping it asks for.
type tally struct {
	n, ended int
	heard    map[int]heardEnd // the ends so far, by rank
	first    *End             // the first failure heard
	early    []End            // exited 0 unfinalized before any failure, while others ran
	exit     *GlobalExit      // the first failing GlobalExit reported
	reports  map[int]pestatus.Report
	// settling is set from the first failure until the supervisor stops
	// the others (settleWindow): a PE that exits 0 then counts as early,
	// since its end may have come first although it is heard later.
	settling bool
	// stopped is set once the supervisor has stopped the PEs (a failure,
	// the timeout, a signal): an end heard since may be the stop's, so it
	// is no PE's cause.
	stopped bool
}

// heardEnd is an end and whether the supervisor had stopped the PEs
// before it was heard.
type heardEnd struct {
	End
	afterStop bool
}

// note records what PE rank has reported so far, heard while it runs.
func (t *tally) note(rank int, rep pestatus.Report) {
	if t.reports == nil {
		t.reports = make(map[int]pestatus.Report)
	}
	t.reports[rank] = rep
	if rep.GlobalExit && rep.ExitStatus&0xff != 0 && t.exit == nil {
		t.exit = &GlobalExit{Rank: rank, Status: rep.ExitStatus}
	}
}

// record notes one PE's end, with everything it reported, and reports
// whether it is the first failure with PEs left to stop: true at most
// once.
func (t *tally) record(e End) (firstFailure bool) {
	t.note(e.Rank, e.Reported)
	if t.heard == nil {
		t.heard = make(map[int]heardEnd)
	}
	t.heard[e.Rank] = heardEnd{e, t.stopped}
	t.ended++
	if !e.Failed() && !e.Reported.Finalized && (t.first == nil && t.ended < t.n || t.settling) {
		t.early = append(t.early, e)
	}
	if e.Failed() && t.first == nil {
		t.first = &e
		return t.ended < t.n
	}
	return false
}

// cause is the failure the job's is (Result.First): the first heard, or
// the PE it reported failed first when that PE's failure was heard before
// the stop, and so on; nil before any failure. A cycle of such reports (a
// partition, where each side saw the other fail) keeps the first heard.
// When the PE the chain ends at reported that its operation failed
// because a peer called Finalize while it waited for it, early is that
// peer (Result.FinalizedEarly): a report the peer's own end need not
// confirm.
func (t *tally) cause() (first *End, early *FinalizedEarly) {
	if t.first == nil {
		return nil, nil
	}
	cur := *t.first
	seen := map[int]bool{cur.Rank: true}
	for {
		rep := t.reports[cur.Rank]
		if !rep.PeerFailed {
			return &cur, nil
		}
		if rep.FinalizedEarly {
			return &cur, &FinalizedEarly{Rank: rep.FailedPE, By: cur.Rank}
		}
		h, ok := t.heard[rep.FailedPE]
		if !ok || !h.Failed() || h.afterStop {
			return &cur, nil
		}
		if seen[h.Rank] {
			return t.first, nil
		}
		seen[h.Rank] = true
		cur = h.End
	}
}

// result is the tally as a Result, without Ends, TimedOut and Signal,
// which the supervisor knows.
func (t *tally) result() Result {
	first, early := t.cause()
	r := Result{First: first, FinalizedEarly: early, GlobalExit: t.exit}
	if r.First != nil {
		r.LeftEarly = t.early
	}
	return r
}

// done reports whether every PE has ended.
func (t *tally) done() bool { return t.ended >= t.n }
