package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCompileCommand(t *testing.T) {
	t.Setenv("CC", "gcc -m64")
	cases := []struct {
		args []string
		link bool
	}{
		{[]string{"-O2", "prog.c", "-o", "prog"}, true},
		{[]string{"-c", "prog.c"}, false},
		{[]string{"-E", "prog.c"}, false},
		{[]string{"--version"}, false},
		{[]string{"a.o", "b.o", "-lm", "-o", "prog"}, true},
	}
	for _, c := range cases {
		cmd := strings.Join(compileCommand("/cache", c.args, variant{}), " ")
		if !strings.HasPrefix(cmd, "gcc -m64 -I/cache/include ") {
			t.Errorf("%v: %s", c.args, cmd)
		}
		if got := strings.Contains(cmd, "-lgoshmem -Wl,-rpath,/cache"); got != c.link {
			t.Errorf("%v: links %v, want %v: %s", c.args, got, c.link, cmd)
		}
	}
	if cmd := strings.Join(compileCommand("/cache", []string{"p.c"}, variant{static: true}), " "); !strings.Contains(cmd, "/cache/libgoshmem.a") || strings.Contains(cmd, "-no-pie") {
		t.Errorf("static: %s", cmd)
	}
	// The race detector shadows only low addresses: the static library's
	// Go data must load with a non-PIE executable.
	if cmd := strings.Join(compileCommand("/cache", []string{"p.c"}, variant{static: true, race: true}), " "); !strings.Contains(cmd, "-no-pie /cache/libgoshmem.a") {
		t.Errorf("static race: %s", cmd)
	}
	if cmd := strings.Join(compileCommand("/cache", []string{"p.c"}, variant{race: true}), " "); !strings.Contains(cmd, "-lgoshmem") || strings.Contains(cmd, "-no-pie") {
		t.Errorf("shared race: %s", cmd)
	}
	// libgoshmem.so links libfabric itself; the archive leaves it to the
	// program.
	if cmd := strings.Join(compileCommand("/cache", []string{"p.c"}, variant{static: true, fabric: true}), " "); !strings.Contains(cmd, "/cache/libgoshmem.a -lfabric") {
		t.Errorf("static fabric: %s", cmd)
	}
	if cmd := strings.Join(compileCommand("/cache", []string{"p.c"}, variant{fabric: true}), " "); strings.Contains(cmd, "-lfabric") {
		t.Errorf("shared fabric: %s", cmd)
	}
}

// TestBuildArgs: the race library is linked at raceBase (the detector
// cannot shadow a shared object where the loader would put it).
func TestBuildArgs(t *testing.T) {
	cases := []struct {
		v    variant
		want string
	}{
		{variant{}, "build -buildmode=c-shared -o OUT ./capi"},
		{variant{static: true}, "build -buildmode=c-archive -o OUT ./capi"},
		{variant{race: true}, "build -buildmode=c-shared -race -ldflags=-extldflags=-Wl,-Ttext-segment=0x40000000 -o OUT ./capi"},
		{variant{static: true, race: true}, "build -buildmode=c-archive -race -o OUT ./capi"},
		{variant{fabric: true}, "build -buildmode=c-shared -tags goshmem_fabric -o OUT ./capi"},
		{variant{fabric: true, race: true}, "build -buildmode=c-shared -tags goshmem_fabric -race -ldflags=-extldflags=-Wl,-Ttext-segment=0x40000000 -o OUT ./capi"},
	}
	for _, c := range cases {
		if got := strings.Join(c.v.buildArgs("OUT"), " "); got != c.want {
			t.Errorf("%+v: go %s, want go %s", c.v, got, c.want)
		}
	}
}

// TestSourceHashCoversTheLibraryOnly: the cache key moves with a file of
// a package ./capi imports (for the fabric variant, with its tagged files
// too) and with a C API header, but not with other files of the module,
// such as a C program kept in the checkout.
func TestSourceHashCoversTheLibraryOnly(t *testing.T) {
	root := t.TempDir()
	write := func(rel, text string) {
		t.Helper()
		path := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/m\n\ngo 1.22\n")
	write("capi/main.go", "package main\n\nimport _ \"example.com/m/lib\"\n\nfunc main() {}\n")
	write("capi/include/shmem.h", "/* v1 */\n")
	write("lib/lib.go", "package lib\n")
	write("other/other.go", "package other\n")
	hash := func(v variant) string {
		t.Helper()
		h, err := sourceHash(root, v)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	plain, fabric := hash(variant{}), hash(variant{fabric: true})
	write("other/other.go", "package other\n\nvar X int\n")
	write("prog.c", "int main(void) { return 0; }\n")
	if hash(variant{}) != plain {
		t.Error("a file outside the library's packages moved the key")
	}
	write("lib/net_fabric.go", "//go:build goshmem_fabric\n\npackage lib\n")
	if hash(variant{}) != plain || hash(variant{fabric: true}) == fabric {
		t.Error("a goshmem_fabric file must move the fabric variant's key only")
	}
	write("lib/lib.go", "package lib\n\nvar Y int\n")
	if hash(variant{}) == plain {
		t.Error("a change to a package the library imports did not move the key")
	}
	plain = hash(variant{})
	write("capi/include/shmem.h", "/* v2 */\n")
	if hash(variant{}) == plain {
		t.Error("a change to a C API header did not move the key")
	}
}
