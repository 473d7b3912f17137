package core

import (
	"errors"
	"testing"

	"github.com/goshmem/shmem/internal/errs"
)

// TestAbortEndsALaterFinalize: a PE's own Abort (Init's closer) ends the
// Finalize that follows it, though no peer ever joins its agreement. The
// exception for a Finalize begun after the simulator's deadlock report,
// which every PE gets and all of them go on to Finalize, must not apply
// to it: it did once, and this Finalize waited for the coordinator's
// timeout (5 minutes of every CI run in TestStopPEEndsTheStartedPE).
func TestAbortEndsALaterFinalize(t *testing.T) {
	w := localWorld(t, 2)
	cause := errs.New("Init", 1, errs.NoPE, errs.ErrTimeout, "no agreement within the timeout")
	w.PEs[1].Abort(cause)
	if err := w.PEs[1].Finalize(); !errors.Is(err, errs.ErrTimeout) {
		t.Fatalf("Finalize after Abort: %v, want the abort's ErrTimeout", err)
	}
	if !w.PEs[1].Finished() {
		t.Fatal("the aborted PE is not finalized")
	}
}
