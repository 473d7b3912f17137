/* badwait.c: waits and tests on variables that are not symmetric (on the
 * stack), which no other PE can change: goshmem refuses each, naming the
 * call and the address, where a wait used to poll forever. A misaligned
 * one in the heap is refused too (over TCP it failed with "zero or
 * invalid Sym", on shared memory it was polled). The test forms
 * come first, which used to return "not yet" without an error. With
 * SHMEMX_ERRORS_RETURN each returns; with the argument "abort", the
 * default error mode, the first wait ends the job with status 1. */
#include "refused.h"

static void refused(const char *call) { refused_as(call, "is not symmetric"); }

int main(int argc, char **argv) {
  shmem_init();
  int abort_mode = argc > 1 && strcmp(argv[1], "abort") == 0;
  long local[2] = {0, 0}, want[2] = {1, 1};
  uint64_t sig = 0;
  static long flag; /* a static is symmetric: its test works */
  if (abort_mode) {
    shmem_long_wait_until(local, SHMEM_CMP_EQ, 1);
    CHECK(0, "shmem_long_wait_until on a stack variable returned");
  }
  shmemx_set_error_mode(SHMEMX_ERRORS_RETURN);
  CHECK(shmem_long_test(&flag, SHMEM_CMP_EQ, 0) == 1 && shmemx_last_error()[0] == 0, "test on a static: %s", shmemx_last_error());
  CHECK(shmem_long_test(local, SHMEM_CMP_EQ, 1) == 0, "shmem_long_test");
  refused("shmem_long_test");
  CHECK(shmem_long_test_any(local, 2, NULL, SHMEM_CMP_EQ, 1) == SIZE_MAX, "shmem_long_test_any");
  refused("shmem_long_test_any");
  shmem_long_wait_until(local, SHMEM_CMP_EQ, 1);
  refused("shmem_long_wait_until");
  shmem_long_wait_until_all_vector(local, 2, NULL, SHMEM_CMP_EQ, want);
  refused("shmem_long_wait_until_all_vector");
  (void)shmem_signal_wait_until(&sig, SHMEM_CMP_EQ, 1);
  refused("shmem_signal_wait_until");
  char *h = shmem_calloc(16, 1);
  CHECK(shmem_int_test((int *)(h + 4), SHMEM_CMP_EQ, 0) == 1, "aligned heap test");
  CHECK(shmem_int_test((int *)(h + 1), SHMEM_CMP_EQ, 0) == 0, "shmem_int_test misaligned");
  refused_as("shmem_int_test", "is not aligned to 4 bytes");
  shmem_int_wait_until((int *)(h + 2), SHMEM_CMP_EQ, 1);
  refused_as("shmem_int_wait_until", "is not aligned to 4 bytes");
  shmem_barrier_all();
  PASS("badwait");
  shmem_finalize();
  return 0;
}
