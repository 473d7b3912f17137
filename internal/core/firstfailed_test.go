package core

import (
	"errors"
	"testing"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/pe"
)

// TestWaitNamesFirstFailure: PE 1 records PE 2's failure, then PE 0's (a
// PE that ended its start-up because of PE 2's and closed "after a
// failure of its own"). A wait ends naming PE 2, the first, not the
// lowest rank (the fault suite saw Init name PE 0 so).
func TestWaitNamesFirstFailure(t *testing.T) {
	w, err := NewLocalWorld(LocalConfig{NPEs: 3, HeapSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	p := w.PEs[1]
	p.s.apply(pe.Failed{Rank: 2, Reason: "killed", Origin: 0})
	p.s.apply(pe.Failed{Rank: 0, Reason: "it closed after a failure of its own", Origin: 1})
	err = p.waitable("Init")
	var e *errs.Error
	if !errors.Is(err, errs.ErrPEFailed) || !errors.As(err, &e) || e.Target != 2 {
		t.Fatalf("wait after PE 2's then PE 0's failure: %v, want ErrPEFailed naming PE 2", err)
	}
}
