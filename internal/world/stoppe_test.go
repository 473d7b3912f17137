package world

import (
	"errors"
	"testing"

	"github.com/goshmem/shmem/internal/core"
	"github.com/goshmem/shmem/internal/errs"
)

// TestStopPEEndsTheStartedPE: when Init fails after the PE started (its
// closing agreement failed), the control stage's closer ends the PE
// before the earlier stages unmap what it uses: the PE is finalized, and
// its Finalize does not wait for the agreement the other PEs never join.
// Without it, a failure notice arriving during the release rang the bell
// of an unmapped segment (exit status 2 in the fault suite).
func TestStopPEEndsTheStartedPE(t *testing.T) {
	w, err := core.NewLocalWorld(core.LocalConfig{NPEs: 2, HeapSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	j := &joiner{p: w.PEs[1]}
	cause := errs.New("Init", 1, 0, errs.ErrPEFailed, "PE 0 failed")
	if err := j.stopPE(cause)(); err != nil {
		t.Fatal(err)
	}
	if !w.PEs[1].Finished() {
		t.Fatal("the PE still runs after its Init failed")
	}
	if err := w.PEs[1].Check("Put"); !errors.Is(err, errs.ErrFinalized) {
		t.Fatalf("an operation after the stop: %v, want ErrFinalized", err)
	}
}
