package launch

import (
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/internal/pestatus"
)

// The tally keeps the PEs that exited 0 before the first failure, while
// others ran, and the job's error names them; a PE that exits 0 last, or
// after a failure, is not "early".
func TestTallyLeftEarly(t *testing.T) {
	tl := tally{n: 4}
	tl.record(End{Rank: 2})
	if first := tl.record(End{Rank: 0, Code: 3}); !first {
		t.Fatal("the first failure was not reported as such")
	}
	tl.record(End{Rank: 3})
	tl.record(End{Rank: 1, Code: 3})
	if len(tl.early) != 1 || tl.early[0].Rank != 2 {
		t.Fatalf("early %+v, want PE 2", tl.early)
	}
	r := tl.result()
	if err := r.Err(); !errors.Is(err, errs.ErrPEFailed) || !strings.Contains(err.Error(), "PE 0 exited with status 3 (PE 2 had exited with status 0") {
		t.Fatalf("Err: %v", err)
	}
	ok := tally{n: 2}
	ok.record(End{Rank: 0})
	ok.record(End{Rank: 1})
	if r := ok.result(); r.Err() != nil || r.EarlyNote() != "" {
		t.Fatalf("clean job: %v %q", r.Err(), r.EarlyNote())
	}
}

// A PE that quit before the failure it caused but is heard after it (its
// process was still exiting when the survivor failed) is still early when
// heard within the settle window; once the window is over it is not.
func TestTallyLeftEarlyHeardLate(t *testing.T) {
	tl := tally{n: 4}
	if !tl.record(End{Rank: 0, Code: 3}) {
		t.Fatal("the first failure was not reported as such")
	}
	tl.settling = true
	tl.record(End{Rank: 1})
	tl.record(End{Rank: 2, Code: 3})
	tl.settling = false
	tl.record(End{Rank: 3})
	if len(tl.early) != 1 || tl.early[0].Rank != 1 {
		t.Fatalf("early %+v, want PE 1", tl.early)
	}
}

// A GlobalExit ends the job under the name of the PE that called it,
// whichever PE's exit (every one of them has its status) is heard first,
// and whether the caller's report arrives while it runs or with its end.
func TestTallyGlobalExit(t *testing.T) {
	called := pestatus.Report{GlobalExit: true, ExitStatus: 3}
	for _, live := range []bool{true, false} {
		tl := tally{n: 3}
		if !tl.record(End{Rank: 1, Code: 3}) {
			t.Fatal("the first failure was not reported as such")
		}
		if live {
			tl.note(2, called)
		}
		tl.settling = true
		tl.record(End{Rank: 0, Code: 3})
		tl.record(End{Rank: 2, Code: 3, Reported: called})
		r := tl.result()
		if r.GlobalExit == nil || *r.GlobalExit != (GlobalExit{Rank: 2, Status: 3}) || r.Status() != 3 {
			t.Fatalf("live %v: global exit %+v, status %d", live, r.GlobalExit, r.Status())
		}
		if err := r.Err(); !errors.Is(err, errs.ErrFinalized) || err.Error() != "launch: PE 2 called GlobalExit(3): finalized" {
			t.Fatalf("Err: %v", err)
		}
		if got := r.Summary(); got != "job ended: PE 2 called GlobalExit(3)" {
			t.Fatalf("Summary %q", got)
		}
	}
	// The caller killed while it waits for the others (the launcher's
	// stop) still gives the job the status it asked for; a status whose
	// low byte is 0 is an exit 0, which fails nothing.
	tl := tally{n: 2}
	tl.record(End{Rank: 0, Code: 256 + 5})
	tl.record(End{Rank: 1, Code: -1, Signal: syscall.SIGTERM, Reported: pestatus.Report{GlobalExit: true, ExitStatus: 256 + 5}})
	if r := tl.result(); r.Status() != 5 {
		t.Fatalf("status %d, want 5", r.Status())
	}
	ok := tally{n: 2}
	ok.record(End{Rank: 0, Reported: pestatus.Report{GlobalExit: true, ExitStatus: 256}})
	ok.record(End{Rank: 1})
	if r := ok.result(); r.GlobalExit != nil || r.Err() != nil || r.Summary() != "" {
		t.Fatalf("GlobalExit(256): %+v", r)
	}
}

// A PE that finalized is not one that left early, and its own failure
// afterwards is said to come after Finalize.
func TestTallyFinalized(t *testing.T) {
	fin := pestatus.Report{Finalized: true}
	tl := tally{n: 3}
	tl.record(End{Rank: 0, Reported: fin})
	tl.record(End{Rank: 2, Reported: fin})
	tl.record(End{Rank: 1, Code: 2, Reported: fin})
	r := tl.result()
	if len(r.LeftEarly) != 0 || r.First == nil || r.First.Rank != 1 || r.Status() != 2 {
		t.Fatalf("result %+v", r)
	}
	if got := r.Summary(); got != "job failed: PE 1 exited with status 2 after Finalize" {
		t.Fatalf("Summary %q", got)
	}
	// Unfinalized, the same exits keep the note.
	tl = tally{n: 3}
	tl.record(End{Rank: 0})
	tl.record(End{Rank: 2})
	tl.record(End{Rank: 1, Code: 2})
	if r := tl.result(); len(r.LeftEarly) != 2 || !strings.Contains(r.Summary(), "PE 0, 2 had exited with status 0") {
		t.Fatalf("without Finalize: %q", r.Summary())
	}
}

// A survivor that failed because it saw PE 0 fail, heard before PE 0,
// gives way to PE 0 once PE 0's failure is heard; not when PE 0's end
// came after the launcher stopped the job (the stop may have made it), nor
// when PE 0 exited 0 (it then left early, which the note says), nor in a
// cycle of such reports.
func TestTallyCause(t *testing.T) {
	saw := func(r int) pestatus.Report { return pestatus.Report{PeerFailed: true, FailedPE: r} }
	tl := tally{n: 3}
	tl.record(End{Rank: 1, Code: 1, Reported: saw(0)})
	if r := tl.result(); r.First.Rank != 1 {
		t.Fatalf("before PE 0's end: first %v", r.First)
	}
	tl.record(End{Rank: 2, Code: 1, Reported: saw(1)}) // a chain: 2 saw 1 (the flood's order)
	tl.record(End{Rank: 0, Code: 1})
	if r := tl.result(); r.First.Rank != 0 || r.Status() != 1 || !strings.Contains(r.Err().Error(), "PE 0 exited with status 1") {
		t.Fatalf("first %v, err %v", r.First, r.Err())
	}

	tl = tally{n: 2}
	tl.record(End{Rank: 1, Code: 3, Reported: saw(0)})
	tl.stopped = true
	tl.record(End{Rank: 0, Code: -1, Signal: syscall.SIGTERM})
	if r := tl.result(); r.First.Rank != 1 || r.Status() != 3 {
		t.Fatalf("stopped PE 0: first %v", r.First)
	}

	tl = tally{n: 3}
	tl.record(End{Rank: 1, Code: 3, Reported: saw(0)})
	tl.settling = true
	tl.record(End{Rank: 0})
	tl.record(End{Rank: 2, Code: 3, Reported: saw(0)})
	if r := tl.result(); r.First.Rank != 1 || len(r.LeftEarly) != 1 || r.LeftEarly[0].Rank != 0 {
		t.Fatalf("PE 0 left early: %+v", r)
	}

	tl = tally{n: 2}
	tl.record(End{Rank: 1, Code: 3, Reported: saw(0)})
	tl.record(End{Rank: 0, Code: 3, Reported: saw(1)})
	if r := tl.result(); r.First.Rank != 1 {
		t.Fatalf("a cycle: first %v, want the first heard", r.First)
	}
}

// A survivor that reported its operation failed because PE 1 called
// Finalize while it waited for it makes PE 1 the job's cause, directly or
// at the end of a chain of peer-failed reports, whether PE 1's process
// has ended (0, or 1 once the others left its Finalize) or not: the
// report is the evidence. The status stays the first failure's.
func TestTallyFinalizedEarly(t *testing.T) {
	early := func(r int) pestatus.Report {
		return pestatus.Report{PeerFailed: true, FailedPE: r, FinalizedEarly: true}
	}
	saw := func(r int) pestatus.Report { return pestatus.Report{PeerFailed: true, FailedPE: r} }
	// C's default error mode: the survivor that found PE 1's Finalize
	// exits 1 at once; the others see it go and exit 1 in turn.
	tl := tally{n: 4}
	tl.record(End{Rank: 0, Code: 1, Reported: saw(2)})
	tl.record(End{Rank: 2, Code: 1, Reported: early(1)})
	tl.settling = true
	tl.record(End{Rank: 3, Code: 1, Reported: saw(2)})
	r := tl.result()
	if r.First == nil || r.First.Rank != 2 || r.FinalizedEarly == nil || *r.FinalizedEarly != (FinalizedEarly{Rank: 1, By: 2}) || r.Status() != 1 {
		t.Fatalf("result %+v", r)
	}
	want := "job failed: PE 1 called Finalize while PE 2 waited for it (PE 2 exited with status 1)"
	if got := r.Summary(); got != want {
		t.Fatalf("Summary %q, want %q", got, want)
	}
	if err := r.Err(); !errors.Is(err, errs.ErrPEFailed) || err.Error() != "launch: "+want[len("job failed: "):]+": PE failed" {
		t.Fatalf("Err: %v", err)
	}
	// PE 1 failing last, after the others left its Finalize, changes
	// nothing.
	tl.stopped = true
	tl.record(End{Rank: 1, Code: 1, Reported: saw(2)})
	if r := tl.result(); r.FinalizedEarly == nil || r.FinalizedEarly.Rank != 1 {
		t.Fatalf("after PE 1's end: %+v", r)
	}
	// Go: the survivors finalize with PE 1, then exit non-zero; PE 1
	// exits 0 finalized. No early note: PE 1 is named already.
	fin := func(rep pestatus.Report) pestatus.Report { rep.Finalized = true; return rep }
	tl = tally{n: 3}
	tl.record(End{Rank: 1, Reported: fin(pestatus.Report{})})
	tl.record(End{Rank: 0, Code: 3, Reported: fin(early(1))})
	tl.record(End{Rank: 2, Code: 3, Reported: fin(early(1))})
	if got := tl.result().Summary(); got != "job failed: PE 1 called Finalize while PE 0 waited for it (PE 0 exited with status 3 after Finalize)" {
		t.Fatalf("Go: Summary %q", got)
	}
}
