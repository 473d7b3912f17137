package ctest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/goshmem/shmem/internal/launch/launchtest"
)

// tools holds oshcc and shmemrun, built once for all tests.
var tools struct {
	once               sync.Once
	dir, oshcc, shmrun string
	err                error
}

// TestMain: when this binary has the race detector, so do the C programs'
// libgoshmem (oshcc --race), shmemrun and oshcc. A C main's return does
// not consult the detector, so a race inside the library would only be
// printed; halt_on_error makes the PE exit with status 66 and the job
// fail.
func TestMain(m *testing.M) {
	if launchtest.RaceEnabled {
		os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" halt_on_error=1"))
	}
	code := m.Run()
	if tools.dir != "" {
		os.RemoveAll(tools.dir) // the oshcc and shmemrun setup built
	}
	os.Exit(code)
}

func repoRoot(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// setup builds oshcc, shmemrun and libgoshmem, or skips without a C compiler.
func setup(t *testing.T) {
	t.Helper()
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	if _, err := exec.LookPath(strings.Fields(cc)[0]); err != nil {
		t.Skipf("no C compiler (%s): the C API tests need gcc or cc", cc)
	}
	tools.once.Do(func() {
		dir, err := os.MkdirTemp("", "goshmem-ctest-")
		if err != nil {
			tools.err = err
			return
		}
		tools.dir = dir
		for _, c := range []struct {
			bin *string
			pkg string
		}{{&tools.oshcc, "github.com/goshmem/shmem/cmd/oshcc"}, {&tools.shmrun, "github.com/goshmem/shmem/cmd/shmemrun"}} {
			if *c.bin, err = launchtest.BuildLauncher(dir, c.pkg); err != nil {
				tools.err = err
				return
			}
		}
		// The first oshcc builds libgoshmem (or finds it in the cache).
		if out, err := oshcc("--lib-dir").CombinedOutput(); err != nil {
			tools.err = fmt.Errorf("oshcc --lib-dir: %v\n%s", err, out)
		}
	})
	if tools.err != nil {
		t.Fatal(tools.err)
	}
}

// oshcc is the oshcc command with args, taking the race-built libgoshmem
// when this binary has the race detector.
func oshcc(args ...string) *exec.Cmd {
	if launchtest.RaceEnabled {
		args = append([]string{"--race"}, args...)
	}
	return exec.Command(tools.oshcc, args...)
}

// TestLibraryRaceBuilt: the C programs of a race-enabled test run load
// the race-built libgoshmem, so the Go inside them is checked too (issue
// 10's -race on every test); a plain run's load the plain one.
func TestLibraryRaceBuilt(t *testing.T) {
	setup(t)
	dir, err := oshcc("--lib-dir").Output()
	if err != nil {
		t.Fatal(err)
	}
	lib := filepath.Join(strings.TrimSpace(string(dir)), "libgoshmem.so")
	info, err := exec.Command("go", "version", "-m", lib).CombinedOutput()
	if err != nil {
		t.Fatalf("go version -m %s: %v\n%s", lib, err, info)
	}
	if got := strings.Contains(string(info), "build\t-race=true"); got != launchtest.RaceEnabled {
		t.Fatalf("%s race-built: %v, want %v:\n%s", lib, got, launchtest.RaceEnabled, info)
	}
}

// compile builds testdata/c/name.c with oshcc and returns the program.
func compile(t *testing.T, name string, extra ...string) string {
	t.Helper()
	src := filepath.Join(repoRoot(t), "capi", "testdata", "c", name+".c")
	out := filepath.Join(t.TempDir(), name)
	args := append([]string{"-O2", "-Wall", "-Werror", src, "-o", out}, extra...)
	if b, err := oshcc(args...).CombinedOutput(); err != nil {
		t.Fatalf("oshcc %s: %v\n%s", name, err, b)
	}
	return out
}

// shmemrun runs prog on np PEs and returns its output; a failed job fails
// the test with that output.
func shmemrun(t *testing.T, np int, prog string, args ...string) string {
	t.Helper()
	return shmemrunFlags(t, []string{"-np", fmt.Sprint(np)}, prog, args...)
}

func shmemrunFlags(t *testing.T, flags []string, prog string, args ...string) string {
	t.Helper()
	cmd := exec.Command(tools.shmrun, append(append(flags, "--timeout", "60s", prog), args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("shmemrun %s %s: %v\n%s", strings.Join(flags, " "), filepath.Base(prog), err, out)
	}
	return string(out)
}

// passesOnBothPaths runs prog on 2 PEs, mapped to each other and over TCP
// (shmemrun --network), and fails the test unless both PEs print
// "name ok" and no check failed.
func passesOnBothPaths(t *testing.T, prog, name string) {
	t.Helper()
	for _, flags := range [][]string{{"-np", "2"}, {"-np", "2", "--network"}} {
		if out := shmemrunFlags(t, flags, prog); strings.Count(out, name+" ok") != 2 || strings.Contains(out, "FAIL") {
			t.Errorf("%v: want both PEs to pass:\n%s", flags, out)
		}
	}
}

// TestFamilies runs a C program per API family, as the spec's examples do
// for each, on 2 and 4 PEs: every PE must report its checks passed. A
// third run forces TCP between the PEs (shmemrun --network), so that no
// peer is mapped and every C call takes the Go path.
func TestFamilies(t *testing.T) {
	setup(t)
	for _, name := range []string{"rma", "amo", "amo_all", "wait", "wait_all", "misc", "team", "activeset", "reduce_all", "rma_all", "rest", "generic", "selfwait", "sigflip", "testloop"} {
		t.Run(name, func(t *testing.T) {
			prog := compile(t, name)
			for _, np := range []int{2, 4} {
				out := shmemrun(t, np, prog)
				if strings.Contains(out, "FAIL") || strings.Count(out, name+" ok") != np {
					t.Fatalf("-np %d: want %d lines %q\n%s", np, np, name+" ok", out)
				}
			}
			out := shmemrunFlags(t, []string{"-np", "2", "--network"}, prog)
			if strings.Contains(out, "FAIL") || strings.Count(out, name+" ok") != 2 {
				t.Fatalf("--network: want 2 lines %q\n%s", name+" ok", out)
			}
		})
	}
}

// TestLatencyProgram runs the OSU-style latency program (numbers are for
// BENCHMARKS.md, not asserted here) on 2 and 4 PEs and checks PE 0 reports
// every measure, each a number. With 4 PEs, PEs 2 and 3 take part in the
// barriers only.
func TestLatencyProgram(t *testing.T) {
	setup(t)
	prog := compile(t, "latency")
	for _, np := range []int{2, 4} {
		out := shmemrun(t, np, prog, "2000")
		for _, m := range []string{"put8+quiet", "get8", "fetch_add8", "p8", "atomic_add8", "pingpong8", "barrier_all", "barrier_aset"} {
			var v float64
			i := strings.Index(out, "[PE 0] "+m+" ")
			if i < 0 {
				t.Errorf("-np %d: no %s line:\n%s", np, m, out)
				continue
			}
			if _, err := fmt.Sscanf(out[i+len("[PE 0] "+m+" "):], "%g", &v); err != nil || v < 0 {
				t.Errorf("-np %d: %s is not a latency (%v):\n%s", np, m, err, out)
			}
		}
	}
}

// TestStaticLibrary links a program with libgoshmem.a and runs it. The
// archive is a second build of goshmem and its dependencies (c-archive
// objects differ from c-shared ones), minutes on a cold 2-core machine, so
// it runs only with GOSHMEM_CTEST_STATIC=1, which .ci/run sets in a run
// of its own.
func TestStaticLibrary(t *testing.T) {
	if os.Getenv("GOSHMEM_CTEST_STATIC") != "1" {
		t.Skip("set GOSHMEM_CTEST_STATIC=1 to build libgoshmem.a and link a program with it")
	}
	setup(t)
	prog := compile(t, "rma", "--static-goshmem")
	if out := shmemrun(t, 2, prog); strings.Count(out, "rma ok") != 2 {
		t.Fatalf("static:\n%s", out)
	}
	// With the archive, Go's runtime data lies among the program's, so its
	// statics are not symmetric (statics.c): the error says why.
	prog = compile(t, "statics_unshared", "--static-goshmem")
	out, err := exec.Command(tools.shmrun, "-np", "2", "--timeout", "60s", prog).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "goshmem: shmem_long_put: ") || !strings.Contains(string(out), "link libgoshmem.so") {
		t.Fatalf("statics with libgoshmem.a: err %v, want the put to fail saying why\n%s", err, out)
	}
}

func run(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd.Path, err, buf.String())
	}
	return buf.String()
}

// TestMappedPeersSkipGo: puts, gets, atomics, put-with-signal, strided puts,
// fence and quiet between PEs of one host never go into Go (direct.c reads
// the flag the Go fallback sets), on 2 and 4 PEs; with TCP forced they do.
func TestMappedPeersSkipGo(t *testing.T) {
	setup(t)
	prog := compile(t, "direct", "-ldl")
	for _, np := range []int{2, 4} {
		if out := shmemrun(t, np, prog); strings.Contains(out, "FAIL") || strings.Count(out, "direct ok") != np {
			t.Fatalf("-np %d: want %d lines %q\n%s", np, np, "direct ok", out)
		}
	}
	if out := shmemrunFlags(t, []string{"-np", "2", "--network"}, prog, "network"); strings.Contains(out, "FAIL") || strings.Count(out, "direct ok") != 2 {
		t.Fatalf("--network: want 2 lines %q\n%s", "direct ok", out)
	}
}

// TestOshccCompileThenLink: oshcc takes cc's usual flags, here -c, -D, -I
// and -o for an object, then links objects, as makefiles call it.
func TestOshccCompileThenLink(t *testing.T) {
	setup(t)
	dir := t.TempDir()
	obj, prog := filepath.Join(dir, "rma.o"), filepath.Join(dir, "rma")
	src := filepath.Join(repoRoot(t), "capi", "testdata", "c", "rma.c")
	if b, err := oshcc("-c", "-O2", "-DGOSHMEM_TEST=1", "-I", dir, src, "-o", obj).CombinedOutput(); err != nil {
		t.Fatalf("oshcc -c: %v\n%s", err, b)
	}
	if b, err := oshcc(obj, "-o", prog).CombinedOutput(); err != nil {
		t.Fatalf("oshcc link: %v\n%s", err, b)
	}
	if out := shmemrun(t, 2, prog); strings.Count(out, "rma ok") != 2 {
		t.Fatalf("want 2 lines %q\n%s", "rma ok", out)
	}
}
