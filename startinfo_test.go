package shmem_test

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/bootstrap"
)

// initPrinting runs Init (a world of this one PE) with env set and returns
// what it printed to standard output.
func initPrinting(t *testing.T, env map[string]string) string {
	t.Helper()
	for k, v := range env {
		t.Setenv(k, v)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	stdout := os.Stdout
	os.Stdout = w
	p, err := shmem.Init(context.Background())
	os.Stdout = stdout
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Finalize(); err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestStartupInformation: OpenSHMEM's SHMEM_VERSION and SHMEM_INFO (any
// value) make PE 0 print the version and the environment variables once
// the world is up; without them Init prints nothing.
func TestStartupInformation(t *testing.T) {
	if out := initPrinting(t, nil); out != "" {
		t.Fatalf("Init printed %q without SHMEM_VERSION or SHMEM_INFO", out)
	}
	out := initPrinting(t, map[string]string{bootstrap.EnvVersion: "1", bootstrap.EnvInfo: "yes"})
	want := "goshmem " + shmem.Version + ": OpenSHMEM 1.5\n"
	if !strings.HasPrefix(out, want) {
		t.Fatalf("SHMEM_VERSION: output starts %q, want %q", out[:min(len(out), 80)], want)
	}
	if !strings.HasSuffix(out, bootstrap.EnvTable) || !strings.Contains(out, "| `SHMEM_SYMMETRIC_SIZE` |") {
		t.Fatalf("SHMEM_INFO: the environment table is missing from %q", out)
	}
}
