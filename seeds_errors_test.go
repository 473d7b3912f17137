package shmem_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/goshmem/shmem"
)

// TestWithSeedsNamesWhatIsWrong: gossip start-up without a job secret says
// the secret is missing, not that npes is wrong, and a bad npes is named
// alone.
func TestWithSeedsNamesWhatIsWrong(t *testing.T) {
	t.Setenv("SHMEM_JOB_SECRET", "")
	seeds := []string{"127.0.0.1:1"}
	_, err := shmem.Init(context.Background(), shmem.WithSeeds(seeds, 2))
	if !errors.Is(err, shmem.ErrBootstrap) || !strings.Contains(err.Error(), "needs a job secret") || strings.Contains(err.Error(), "npes") {
		t.Errorf("WithSeeds without a secret: %v, want ErrBootstrap naming only the missing secret", err)
	}
	_, err = shmem.Init(context.Background(), shmem.WithSeeds(seeds, 0), shmem.WithJobSecret("a job secret of some length"))
	if !errors.Is(err, shmem.ErrBootstrap) || !strings.Contains(err.Error(), "npes >= 1, got 0") || strings.Contains(err.Error(), "secret") {
		t.Errorf("WithSeeds with npes 0: %v, want ErrBootstrap naming only npes", err)
	}
}
