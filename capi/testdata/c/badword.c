/* badword.c: atomics, signals and locks on words that are not naturally
 * aligned, and a put that runs past the end of the heap. The spec's memory
 * model requires those words aligned; goshmem refuses each call with a
 * message saying so, on a mapped peer as over the network (a mapped peer
 * used to get a torn C11 atomic, with no error), and writes nothing.
 * SHMEMX_ERRORS_RETURN lets one run try every call: each must fail with
 * the expected text, and PE 1's memory must stay zero. With the argument
 * "abort", the default error mode: the first call ends the job. */
#include "refused.h"

static long slocks[2];

int main(int argc, char **argv) {
  shmem_init();
  int abort_mode = argc > 1 && strcmp(argv[1], "abort") == 0;
  if (!abort_mode) shmemx_set_error_mode(SHMEMX_ERRORS_RETURN);
  int me = shmem_my_pe();
  char *h = shmem_calloc(64, 1);
  long src[2] = {7, 7};
  shmem_barrier_all();
  if (me == 0) {
    int fi = -1;
    long fl = -1;
    (void)shmem_int_atomic_fetch_add((int *)(h + 1), 1, 1);
    CHECK(!abort_mode, "shmem_int_atomic_fetch_add on a misaligned word returned");
    refused_as("shmem_int_atomic_fetch_add", "is not aligned to 4 bytes (PE 0 -> PE 1)");
    shmem_long_atomic_add((long *)(h + 12), 1, 1);
    refused_as("shmem_long_atomic_add", "is not aligned to 8 bytes (PE 0 -> PE 1)");
    (void)shmem_int_atomic_compare_swap((int *)(h + 18), 0, 5, 1);
    refused_as("shmem_int_atomic_compare_swap", "is not aligned to 4 bytes");
    shmem_int_atomic_fetch_add_nbi(&fi, (int *)(h + 22), 1, 1);
    refused_as("shmem_int_atomic_fetch_add_nbi", "is not aligned to 4 bytes");
    (void)shmem_ctx_long_atomic_swap(SHMEM_CTX_DEFAULT, (long *)(h + 28), 9, 0);
    refused_as("shmem_ctx_long_atomic_swap", "is not aligned to 8 bytes (PE 0 -> PE 0)");
    shmem_putmem_signal(h + 40, src, 8, (uint64_t *)(h + 51), 1, SHMEM_SIGNAL_SET, 1);
    refused_as("shmem_putmem_signal", "is not aligned to 8 bytes");
    shmem_set_lock((long *)(h + 4));
    refused_as("shmem_set_lock", "is not aligned to 8 bytes");
    shmem_set_lock((long *)((char *)slocks + 4));
    refused_as("shmem_set_lock", "is not aligned to 8 bytes");
    shmem_putmem(h, src, (size_t)1 << 40, 1);
    refused_as("shmem_putmem", "runs past the end of the symmetric heap");
    shmem_quiet();
    CHECK(fi == -1 && fl == -1, "fetch landed: %d %ld", fi, fl);
  }
  shmem_barrier_all();
  for (int i = 0; i < 64; i++) CHECK(h[i] == 0, "byte %d of PE %d's heap object is %d, want 0: a refused call wrote", i, me, h[i]);
  for (int i = 0; i < 2; i++) CHECK(slocks[i] == 0, "static lock word %d is %ld, want 0", i, slocks[i]);
  PASS("badword");
  shmem_finalize();
  return 0;
}
