package shmem_test

import (
	"bufio"
	"bytes"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// outOfLine lists the functions the mapped fast paths must inline into a
// user's instantiation of an operation: the lookup of the mapping, the
// metrics' nil checks and the word operations (exportInlineBodies).
// udma.Path.ringArmed (a peer waits), Put, Get and Atomic (copies and the
// other kinds), core.Cell.Time (one sampled operation in 1024) are meant
// to be calls.
var outOfLine = regexp.MustCompile(`CALL github\.com/goshmem/shmem/(internal/core\.\(\*PE\)\.(Mapped|Counts)|internal/core\.\(\*Counts\)\.Count|transport/udma\.\(\*Path\)\.(Write64|Load64|FetchAdd64|CompareSwap64|RingWord|ring|word))\(`)

// TestFastPathsInline builds testdata/inlined, a program of its own
// package that instantiates the operations for int64 as a user's does,
// and reads their machine code: a call left to Mapped or FetchAdd64
// there costs a few of an atomic's ten nanoseconds, and only the
// compiler's export rules (not this package's code) decide it.
func TestFastPathsInline(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	if raceEnabled {
		// Its atomics are calls into the race runtime, which puts Mapped
		// and the word operations over the inlining budget: what is
		// measured is the plain build (.ci/run runs this test so).
		t.Skip("the race build inlines differently")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	bin := filepath.Join(t.TempDir(), "inlined")
	if out, err := exec.Command(goTool, "build", "-o", bin, "./testdata/inlined").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(goTool, "tool", "objdump", "-s", `shmem\.[A-Z][A-Za-z]*\[go\.shape\.int64\]$`, bin).Output()
	if err != nil {
		t.Fatalf("go tool objdump: %v", err)
	}
	fns := map[string]bool{}
	var fn string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, "TEXT "); ok {
			fn, _, _ = strings.Cut(name, " ")
			fns[fn] = true
			continue
		}
		if m := outOfLine.FindString(line); m != "" {
			t.Errorf("%s calls %s out of line", fn, strings.TrimPrefix(m, "CALL github.com/goshmem/shmem/"))
		}
	}
	for _, op := range []string{"Put", "Get", "P", "G", "AtomicFetch", "AtomicSet", "AtomicCompareSwap", "AtomicFetchInc", "AtomicInc", "AtomicFetchAdd", "AtomicAdd"} {
		if name := "github.com/goshmem/shmem." + op + "[go.shape.int64](SB)"; !fns[name] {
			t.Errorf("no %s in the program's machine code (the objdump pattern or the program is stale)", name)
		}
	}
}
