package core

import (
	"errors"
	"testing"

	"github.com/goshmem/shmem/actors"
	"github.com/goshmem/shmem/internal/errs"
)

// TestFinalizeFailsOnTheCoordinatorsWord: the coordinator may answer
// Finalize's agreement with a failure before this PE has the failure's
// notice (the notice and the answer travel apart). Finalize then reports
// the agreement's failure; it used to swap it for "every failure this PE
// knows of", none yet, and return nil (CI, TestFailureMatrixFabric:
// team-barrier-member-dies, PE 3's Finalize returned nil with PE 1 dead).
func TestFinalizeFailsOnTheCoordinatorsWord(t *testing.T) {
	w := localWorld(t, 3)
	done := make(chan error, 2)
	for _, p := range w.PEs[:2] {
		go func() { done <- p.Finalize() }()
	}
	// Only the coordinator learns that PE 2 failed: no PE gets a notice.
	w.system.Root.Send(w.coord, &actors.PEFailed{Rank: 2, Reason: "test: its process ended"})
	for range 2 {
		err := <-done
		var e *errs.Error
		if !errors.Is(err, errs.ErrPEFailed) || !errors.As(err, &e) || e.Target != 2 || e.Op != "Finalize" {
			t.Fatalf("Finalize with PE 2 failed at the coordinator: %v, want ErrPEFailed naming Finalize and PE 2", err)
		}
	}
}
