package world_test

import (
	"strings"
	"testing"

	lt "github.com/goshmem/shmem/internal/launch/launchtest"
)

// TestAllocatesNothing: with each PE a process, over shared memory and
// over TCP (with TLS), the barriers and the collectives allocate nothing
// per call (RoleAllocs:
// BarrierAll, SyncAll, a split team's Barrier and Sync, Broadcast,
// FCollect, Collect, Alltoall, Alltoalls, Reduce, and one of several in
// turn). Each once made a closure per dissemination round, a message
// buffer per collective or a kernel per Reduce. Ported from barrier17c's
// TestBarrierAllocatesNothing, extended to the collectives.
func TestAllocatesNothing(t *testing.T) {
	if lt.RaceEnabled {
		// The PE programs are race-built: the race detector's sync.Pool
		// drops a wait's timers at random (see the root package's
		// raceEnabled), so the counts are not the program's.
		t.Skip("PE programs built with -race allocate where a normal build does not")
	}
	for _, path := range []struct {
		name string
		env  []string
	}{{"shm", nil}, {"tcp", []string{"SHMEM_TRANSPORT=tcp"}}} {
		t.Run(path.name, func(t *testing.T) {
			codes, outs := world(t, 2, lt.RoleAllocs, path.env...)
			expectAll(t, codes, outs, 0)
			for r, out := range outs {
				if !strings.Contains(out, lt.AllocsLine+"DONE\n") {
					t.Errorf("PE %d did not count every call; output:\n%s", r, out)
					continue
				}
				for _, line := range strings.Split(out, "\n") {
					counted, ok := strings.CutPrefix(line, lt.AllocsLine)
					if !ok || counted == "DONE" {
						continue
					}
					if !strings.HasSuffix(counted, "=0") {
						t.Errorf("PE %d: %s allocations per call, want 0", r, counted)
					}
				}
			}
		})
	}
}
