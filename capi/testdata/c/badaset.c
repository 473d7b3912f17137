/* badaset.c: an active set that runs past the world (start 0, stride 1,
 * one PE more than the world) is refused as not fitting, where the
 * message used to say that PE 0 is not in it. With the argument
 * "nreduce", a *_to_all reduction of -1 elements is refused, where it
 * returned as if done. */
#include <string.h>
#include "check.h"

static long pSync[SHMEM_REDUCE_SYNC_SIZE];
static long pWrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
static long src[4], dst[4];

int main(int argc, char **argv) {
  shmem_init();
  for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++) pSync[i] = SHMEM_SYNC_VALUE;
  shmem_barrier_all();
  if (argc > 1 && strcmp(argv[1], "nreduce") == 0) {
    shmem_long_sum_to_all(dst, src, -1, 0, 0, shmem_n_pes(), pWrk, pSync);
    CHECK(0, "shmem_long_sum_to_all of -1 elements returned");
  }
  shmem_barrier(0, 0, shmem_n_pes() + 1, pSync);
  CHECK(0, "shmem_barrier on an active set larger than the world returned");
  shmem_finalize();
  return 0;
}
