package affinity

import (
	"os"
	"runtime"
	"slices"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

func TestParseAndFormatList(t *testing.T) {
	for in, want := range map[string][]int{"0": {0}, "0-3,8": {0, 1, 2, 3, 8}, "5,2": {5, 2}, "1023": {1023}} {
		got, err := ParseList(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("ParseList(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "a", "3-1", "-1", "1024", "0-1024", "1,,2", "1-", " 1"} {
		if got, err := ParseList(in); err == nil {
			t.Errorf("ParseList(%q) = %v, want an error", in, got)
		}
	}
	if s := FormatList([]int{0, 2, 3}); s != "0,2,3" {
		t.Errorf("FormatList: %q", s)
	}
}

func FuzzParseList(f *testing.F) {
	for _, s := range []string{"0", "0-3,8", "1023", "3-1", "", "1,,2", "0-1023"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cpus, err := ParseList(s)
		if err != nil {
			return
		}
		for _, c := range cpus {
			if c < 0 || c >= maxCPU {
				t.Fatalf("ParseList(%q) accepted CPU %d", s, c)
			}
		}
		again, err := ParseList(FormatList(cpus))
		if err != nil || !slices.Equal(again, cpus) {
			t.Fatalf("ParseList(FormatList(%v)) = %v, %v", cpus, again, err)
		}
	})
}

// threadMasks returns the CPU count of every thread of this process.
func threadMasks(t *testing.T) map[int]int {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	counts := map[int]int{}
	for _, e := range tasks {
		tid, _ := strconv.Atoi(e.Name())
		var set unix.CPUSet
		if unix.SchedGetaffinity(tid, &set) == nil {
			counts[tid] = set.Count()
		}
	}
	return counts
}

// TestWidenMovesEveryThread: Widen sets every thread's mask, the bound
// PE's (narrowed here to one CPU) and those it started.
func TestWidenMovesEveryThread(t *testing.T) {
	all, err := Allowed()
	if err != nil || len(all) < 2 {
		t.Skipf("needs 2 CPUs to widen to (have %v, %v)", all, err)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer Widen(all) // this test binary's own mask, back
	if err := Widen(all[:1]); err != nil {
		t.Fatal(err)
	}
	for tid, n := range threadMasks(t) {
		if n != 1 {
			t.Fatalf("thread %d on %d CPUs after narrowing to 1", tid, n)
		}
	}
	if err := Widen(all); err != nil {
		t.Fatal(err)
	}
	for tid, n := range threadMasks(t) {
		if n != len(all) {
			t.Errorf("thread %d on %d CPUs after widening to %d", tid, n, len(all))
		}
	}
	if err := Widen(nil); err == nil {
		t.Error("Widen(nil) moved the threads nowhere without an error")
	}
}
