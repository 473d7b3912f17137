package ctest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestHeaderNamesEverySpecRoutine compiles and links a program that takes
// the address of every C routine the OpenSHMEM 1.5 index names
// (testdata/spec15_c_api.txt, generated from the spec by
// capi/internal/specnames) and uses every C11 generic name as a macro or
// function: a routine missing from shmem.h fails to compile, one missing
// from libgoshmem fails to link or load.
func TestHeaderNamesEverySpecRoutine(t *testing.T) {
	setup(t)
	root := repoRoot(t)
	f, err := os.Open(filepath.Join(root, "capi", "testdata", "spec15_c_api.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var src strings.Builder
	src.WriteString("#include <stdio.h>\n#include <shmem.h>\n#include <shmemx.h>\n\nstatic void *routines[] = {\n")
	var generics strings.Builder
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) != 2 {
			continue
		}
		name, kind := fs[0], fs[1]
		if strings.HasPrefix(kind, "generic") {
			// A generic name is a macro, or else must be a function.
			fmt.Fprintf(&generics, "#ifndef %s\nstatic void *generic_%s = (void *)&%s;\n#endif\n", name, name, name)
			continue
		}
		fmt.Fprintf(&src, "  (void *)&%s,\n", name)
		n++
	}
	for _, acl := range []string{"aclshmemx_get_uniqueid", "aclshmemx_set_attr_uniqueid_args", "aclshmemx_init_attr",
		"aclshmemx_set_conf_store_tls", "aclshmem_malloc", "aclshmem_finalize", "shmemx_last_error", "shmemx_set_error_mode"} {
		fmt.Fprintf(&src, "  (void *)&%s,\n", acl)
		n++
	}
	src.WriteString("};\n\n" + generics.String())
	src.WriteString(`
int main(void) {
  size_t linked = 0;
  for (size_t i = 0; i < sizeof routines / sizeof routines[0]; i++) linked += routines[i] != NULL;
  printf("%zu routines linked\n", linked);
  return 0;
}
`)
	dir := t.TempDir()
	c := filepath.Join(dir, "names.c")
	if err := os.WriteFile(c, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(dir, "names")
	if out, err := oshcc("-Wno-unused-variable", c, "-o", prog).CombinedOutput(); err != nil {
		t.Fatalf("the spec's routines do not all compile and link: %v\n%s", err, firstLines(string(out), 40))
	}
	out := run(t, exec.Command(prog))
	if want := fmt.Sprintf("%d routines linked", n); !strings.Contains(out, want) {
		t.Fatalf("got %q, want %q", out, want)
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
