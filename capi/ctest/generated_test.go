package ctest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGeneratedFilesUpToDate regenerates the typed routines into a
// temporary directory: the checked-in files must match (run go generate
// in capi/ after changing the generator or the spec's list).
func TestGeneratedFilesUpToDate(t *testing.T) {
	root := repoRoot(t)
	out := t.TempDir()
	cmd := exec.Command("go", "run", "./capi/internal/cgen", "capi", out)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cgen: %v\n%s", err, b)
	}
	for _, f := range []string{"typed_gen.c", filepath.Join("include", "shmem_gen.h")} {
		want, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(root, "capi", f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("capi/%s is stale: run go generate ./capi", f)
		}
	}
}
