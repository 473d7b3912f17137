package shmem_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/goshmem/shmem"
)

// TestInitMistakes: a bad SHMEM_SYMMETRIC_SIZE is named and ignored when
// WithHeapSize is given; a heap too small for the world states the
// minimum; a required launcher that is missing fails Init.
func TestInitMistakes(t *testing.T) {
	ctx := context.Background()
	t.Setenv("SHMEM_SYMMETRIC_SIZE", "garbage")
	_, err := shmem.Init(ctx)
	if !errors.Is(err, shmem.ErrInvalidArgument) || !strings.Contains(err.Error(), `SHMEM_SYMMETRIC_SIZE="garbage"`) {
		t.Errorf("Init with SHMEM_SYMMETRIC_SIZE=garbage: %v, want ErrInvalidArgument naming the variable", err)
	}
	p, err := shmem.Init(ctx, shmem.WithHeapSize(1<<20))
	if err != nil {
		t.Fatalf("WithHeapSize did not win over a bad SHMEM_SYMMETRIC_SIZE: %v", err)
	}
	if err := p.Finalize(); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SHMEM_SYMMETRIC_SIZE", "")

	_, err = shmem.Init(ctx, shmem.WithHeapSize(4096))
	if !errors.Is(err, shmem.ErrOutOfMemory) || !strings.Contains(err.Error(), "give at least") {
		t.Errorf("Init with a 4 KiB heap: %v, want ErrOutOfMemory stating the minimum", err)
	}

	_, err = shmem.Init(ctx, shmem.WithRequireLauncher())
	if !errors.Is(err, shmem.ErrBootstrap) || !strings.Contains(err.Error(), "shmemrun") {
		t.Errorf("Init requiring a launcher without one: %v, want ErrBootstrap", err)
	}
	t.Setenv("SHMEM_REQUIRE_LAUNCHER", "1")
	if _, err := shmem.Init(ctx); !errors.Is(err, shmem.ErrBootstrap) {
		t.Errorf("Init with SHMEM_REQUIRE_LAUNCHER=1 and no launcher: %v, want ErrBootstrap", err)
	}
}
