/* badaset.c: an active set that runs past the world ("size": start 0,
 * stride 1, one PE more than the world) is refused as not fitting, where
 * the message used to say that PE 0 is not in it. */
#include "check.h"

static long pSync[SHMEM_BARRIER_SYNC_SIZE];

int main(void) {
  shmem_init();
  for (int i = 0; i < SHMEM_BARRIER_SYNC_SIZE; i++) pSync[i] = SHMEM_SYNC_VALUE;
  shmem_barrier_all();
  shmem_barrier(0, 0, shmem_n_pes() + 1, pSync);
  CHECK(0, "shmem_barrier on an active set larger than the world returned");
  shmem_finalize();
  return 0;
}
