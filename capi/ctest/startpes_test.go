package ctest

import (
	"strings"
	"testing"
)

// TestStartPesFinalizesAtExit: a program started by start_pes returns
// from main without shmem_finalize, as the spec allows it (the library
// finalizes it implicitly at exit). goshmem did not: over TCP the job
// failed in about 1 run of 7 on 4 PEs ("BarrierAll (PE 2 -> PE 1): ...
// connection reset by peer"), a PE leaving while its part of the last
// barrier was on its way. Now every PE is finalized at exit, which its
// atexit handler sees (shmem_my_pe() is -1 then), on shared memory and
// over TCP.
func TestStartPesFinalizesAtExit(t *testing.T) {
	setup(t)
	prog := compile(t, "startpes")
	for _, flags := range [][]string{{"-np", "4"}, {"-np", "4", "--network"}} {
		for i := 0; i < 3; i++ {
			out := shmemrunFlags(t, flags, prog)
			if strings.Count(out, "startpes ok") != 4 || strings.Count(out, "at exit: shmem_my_pe() is -1") != 4 {
				t.Fatalf("%v: want every PE to pass and to be finalized at exit:\n%s", flags, out)
			}
		}
	}
}
