/* sigflip.c: shmem_signal_wait_until returns a value that satisfies its
 * condition (OpenSHMEM 1.5, 9.9.3), even while a peer keeps changing the
 * signal: PE 1 flips PE 0's signal between 1 and 2 with put-with-signal,
 * PE 0 waits for 1 many times and checks each return. */
#include "check.h"

static uint64_t sig;
static long stop, d;

int main(int argc, char **argv) {
  shmem_init();
  int me = shmem_my_pe();
  long iters = argc > 1 ? atol(argv[1]) : 20000;
  shmem_barrier_all();
  if (me == 1) {
    long x = 0;
    for (uint64_t k = 0; shmem_long_atomic_fetch(&stop, 1) == 0; k++)
      shmem_long_put_signal(&d, &x, 1, &sig, 1 + (k & 1), SHMEM_SIGNAL_SET, 0);
  } else if (me == 0) {
    for (long i = 0; i < iters; i++) {
      uint64_t v = shmem_signal_wait_until(&sig, SHMEM_CMP_EQ, 1);
      CHECK(v == 1, "call %ld: shmem_signal_wait_until(EQ 1) returned %lu", i, (unsigned long)v);
    }
    shmem_long_atomic_set(&stop, 1, 1);
  }
  shmem_barrier_all();
  PASS("sigflip");
  shmem_finalize();
  return 0;
}
