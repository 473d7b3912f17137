package affinity

import (
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestBind(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "SHMEM_BUSY_POLL" {
				return v
			}
			return ""
		}
	}
	for _, tc := range []struct {
		mode, poll string
		want       bool
	}{
		{"core", "0", true}, {"none", "", false}, {"auto", "", true},
		{"auto", "50us", true}, {"auto", "0", false}, {"auto", "0s", false},
	} {
		got, err := Bind(tc.mode, env(tc.poll))
		if err != nil || got != tc.want {
			t.Errorf("Bind(%q) with SHMEM_BUSY_POLL=%q = %v, %v; want %v", tc.mode, tc.poll, got, err, tc.want)
		}
	}
	if _, err := Bind("socket", env("")); err == nil {
		t.Error("Bind accepted an unknown mode")
	}
}

func TestPlan(t *testing.T) {
	cpus := []int{0, 2, 3, 5, 6}
	for _, tc := range []struct {
		np   int
		want [][]int
	}{
		{1, [][]int{{0, 2, 3, 5, 6}}},
		{2, [][]int{{0, 2}, {3, 5}}},
		{5, [][]int{{0}, {2}, {3}, {5}, {6}}},
		{6, nil},
		{0, nil},
	} {
		got := Plan(tc.np, cpus)
		if !slices.EqualFunc(got, tc.want, slices.Equal) || (got == nil) != (tc.want == nil) {
			t.Errorf("Plan(%d) = %v, want %v", tc.np, got, tc.want)
		}
	}
}

// A started child runs on exactly the CPU it was given, and this process
// (the locked thread included) keeps its own mask.
func TestStartLockedBindsTheChild(t *testing.T) {
	before, err := Allowed()
	if err != nil || len(before) == 0 {
		t.Fatalf("Allowed: %v %v", before, err)
	}
	cpu := before[len(before)-1]
	cmd := exec.Command("grep", "^Cpus_allowed_list:", "/proc/self/status")
	var out strings.Builder
	cmd.Stdout = &out
	runtime.LockOSThread()
	startErr, restoreErr := StartLocked(cmd, []int{cpu})
	mine, err := Allowed() // this locked thread's mask
	if restoreErr == nil {
		runtime.UnlockOSThread()
	}
	if startErr != nil || restoreErr != nil {
		t.Fatal(startErr, restoreErr)
	}
	if err != nil || !slices.Equal(mine, before) {
		t.Fatalf("the forking thread's CPUs changed from %v to %v (%v)", before, mine, err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(strings.TrimPrefix(out.String(), "Cpus_allowed_list:")); got != strconv.Itoa(cpu) {
		t.Fatalf("child allowed on %q, want %d", got, cpu)
	}
	after, err := Allowed()
	if err != nil || !slices.Equal(after, before) {
		t.Fatalf("this process's CPUs changed from %v to %v (%v)", before, after, err)
	}
}
