package launch

import (
	"errors"
	"strings"
	"testing"

	"github.com/goshmem/shmem/internal/errs"
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
	r := Result{First: tl.first, LeftEarly: tl.early}
	if err := r.Err(); !errors.Is(err, errs.ErrPEFailed) || !strings.Contains(err.Error(), "PE 0 exited with status 3 (PE 2 had exited with status 0") {
		t.Fatalf("Err: %v", err)
	}
	ok := tally{n: 2}
	ok.record(End{Rank: 0})
	ok.record(End{Rank: 1})
	if r := (Result{First: ok.first, LeftEarly: ok.early}); r.Err() != nil || r.EarlyNote() != "" {
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
