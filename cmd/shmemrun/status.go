package main

import (
	"fmt"
	"syscall"
)

// end is how one PE's process ended.
type end struct {
	Rank int
	// Code is the exit status, or -1 when a signal killed the process.
	Code int
	// Signal is the signal that killed the process; 0 when it exited.
	Signal syscall.Signal
}

// failed reports whether the PE ended badly: a non-zero status or a signal.
func (e end) failed() bool { return e.Signal != 0 || e.Code != 0 }

// status is the shell-style status of the end: the exit code, or 128 plus
// the signal number.
func (e end) status() int {
	if e.Signal != 0 {
		return 128 + int(e.Signal)
	}
	return e.Code
}

func (e end) String() string {
	if e.Signal != 0 {
		return fmt.Sprintf("PE %d was killed by signal %d (%v)", e.Rank, int(e.Signal), e.Signal)
	}
	return fmt.Sprintf("PE %d exited with status %d", e.Rank, e.Code)
}

// tally aggregates PE ends in the order they arrive: the job's status is
// that of the first PE that failed, 0 when none did. It is a pure state
// machine; the supervisor does the killing it asks for.
type tally struct {
	n, ended int
	first    *end
}

func newTally(n int) *tally { return &tally{n: n} }

// record notes one PE's end and reports whether the others must now be
// stopped: true exactly once, at the first failure.
func (t *tally) record(e end) (stopOthers bool) {
	t.ended++
	if e.failed() && t.first == nil {
		t.first = &e
		return t.ended < t.n
	}
	return false
}

// done reports whether every PE has ended.
func (t *tally) done() bool { return t.ended >= t.n }

// status is the job's exit status: the first failure's, else 0.
func (t *tally) status() int {
	if t.first == nil {
		return 0
	}
	return t.first.status()
}

// failure describes the first failure; empty when there was none.
func (t *tally) failure() string {
	if t.first == nil {
		return ""
	}
	return t.first.String()
}
