package ctest

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// TestMisalignedWordRefused: atomics (blocking, non-blocking, on a
// context), a put-with-signal's signal and locks (heap and static) on
// words that are not naturally aligned are refused, naming the call, the
// PEs and the alignment, and write nothing; so is a put running past the
// end of the heap. On a mapped peer such an atomic used to be done as a
// torn C11 atomic and return as if it worked, while over TCP it failed
// with "zero or invalid Sym". In the default error mode the first such
// call ends the job with status 1.
func TestMisalignedWordRefused(t *testing.T) {
	setup(t)
	prog := compile(t, "badword")
	passesOnBothPaths(t, prog, "badword")
	out, err := exec.Command(tools.shmrun, "-np", "2", "--timeout", "60s", prog, "abort").CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || strings.Contains(string(out), "FAIL") ||
		!strings.Contains(string(out), "goshmem: shmem_int_atomic_fetch_add: invalid argument: address ") ||
		!strings.Contains(string(out), "is not aligned to 4 bytes (PE 0 -> PE 1)") {
		t.Fatalf("abort mode: %v, want exit status 1 and the message naming the call and the alignment:\n%s", err, out)
	}
}

// TestInvalidContextRefused: RMA and atomics on SHMEM_CTX_INVALID, a
// destroyed context or a made-up handle of 4096 or more are refused with
// "invalid context" and write nothing, on a mapped peer as over TCP; on a
// mapped peer they used to run on the default context. After 4200
// contexts made and destroyed, new world and team contexts still work (a
// team context could not be made once handles passed 4095). In the
// default error mode the first refusal ends the job.
func TestInvalidContextRefused(t *testing.T) {
	setup(t)
	prog := compile(t, "badctx")
	passesOnBothPaths(t, prog, "badctx")
	out, err := exec.Command(tools.shmrun, "-np", "2", "--timeout", "60s", prog, "abort").CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || strings.Contains(string(out), "FAIL") ||
		!strings.Contains(string(out), "goshmem: shmem_ctx_long_put: invalid argument: invalid context 0x0") {
		t.Fatalf("abort mode: %v, want exit status 1 and the message naming the call and the context:\n%s", err, out)
	}
}

// TestOldWorldContextRefused: a context left undestroyed when the world
// ended (shmem_finalize, then shmem_init again) is refused in the next
// world, on a mapped peer as over TCP; a new context works there.
func TestOldWorldContextRefused(t *testing.T) {
	setup(t)
	prog := compile(t, "reinitctx")
	passesOnBothPaths(t, prog, "reinitctx")
}

// TestWaitOnNonSymmetricRefused: waits and tests on a stack variable are
// refused, naming the call and saying the address is not symmetric, on
// shared memory and over TCP; a wait on one used to poll forever (on one
// PE, or until the other PEs finalized). In the default error mode the
// first wait ends the job with status 1.
func TestWaitOnNonSymmetricRefused(t *testing.T) {
	setup(t)
	prog := compile(t, "badwait")
	for _, flags := range [][]string{{"-np", "1"}, {"-np", "2"}, {"-np", "2", "--network"}} {
		if out := shmemrunFlags(t, flags, prog); !strings.Contains(out, "badwait ok") || strings.Contains(out, "FAIL") {
			t.Errorf("%v: want every PE to pass:\n%s", flags, out)
		}
	}
	out, err := exec.Command(tools.shmrun, "-np", "1", "--timeout", "60s", prog, "abort").CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || strings.Contains(string(out), "FAIL") ||
		!strings.Contains(string(out), "goshmem: shmem_long_wait_until: invalid argument: address ") ||
		!strings.Contains(string(out), "is not symmetric") {
		t.Fatalf("abort mode: %v, want exit status 1 and the message naming the call:\n%s", err, out)
	}
}

// TestActiveSetPastWorld: shmem_barrier on an active set of 3 PEs in a
// world of 2 ends the job naming the set and the world's size; the
// message said "PE 0 is not in the active set", which it is. A *_to_all
// reduction of -1 elements ends it too, where it returned as if done.
func TestActiveSetPastWorld(t *testing.T) {
	setup(t)
	prog := compile(t, "badaset")
	out, err := exec.Command(tools.shmrun, "-np", "2", "--timeout", "60s", prog).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || strings.Contains(string(out), "FAIL") ||
		!strings.Contains(string(out), "goshmem: shmem_barrier: the active set (start 0, log stride 0, size 3) does not fit in the 2 PEs") ||
		strings.Contains(string(out), "is not in the active set") {
		t.Fatalf("%v, want exit status 1 and the set named as too large:\n%s", err, out)
	}
	out, err = exec.Command(tools.shmrun, "-np", "2", "--timeout", "60s", prog, "nreduce").CombinedOutput()
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || strings.Contains(string(out), "FAIL") ||
		!strings.Contains(string(out), "goshmem: shmem_long_sum_to_all: nreduce -1 is negative") {
		t.Fatalf("nreduce -1: %v, want exit status 1 and the count refused:\n%s", err, out)
	}
}
