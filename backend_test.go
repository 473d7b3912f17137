package shmem_test

import (
	"context"
	"errors"
	"testing"

	"github.com/goshmem/shmem"
)

// TestInitRejectsNilBackendAndOption: a nil backend is ErrInvalidArgument
// and a nil Option is skipped; neither panics.
func TestInitRejectsNilBackendAndOption(t *testing.T) {
	if p, err := shmem.Init(context.Background(), shmem.WithBackend(nil)); !errors.Is(err, shmem.ErrInvalidArgument) || p != nil {
		t.Errorf("Init(WithBackend(nil)) = %v, %v; want ErrInvalidArgument", p, err)
	}
	p, err := shmem.Init(context.Background(), nil, shmem.WithHeapSize(1<<20))
	if err != nil {
		t.Fatalf("Init with a nil option: %v", err)
	}
	if p.NPEs() != 1 || p.TeamWorld().NPEs() != 1 {
		t.Errorf("a world of %d PEs, TeamWorld of %d", p.NPEs(), p.TeamWorld().NPEs())
	}
	if err := p.Finalize(); err != nil {
		t.Fatal(err)
	}
}
