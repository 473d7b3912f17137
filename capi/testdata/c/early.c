/* early.c: PE 1 calls shmem_finalize while PE 0 is blocked, in
 * shmem_long_wait_until on a variable nobody sets (argument "wait") or in
 * the active-set shmem_barrier ("aset"): no one is left to end the wait,
 * so it must end with goshmem's message naming the call, not hang. With
 * argument "barrier_all" every other PE waits in shmem_barrier_all, which
 * fails each (default error mode: exit status 1, no finalize). */
#include <stdio.h>
#include <string.h>
#include <shmem.h>

static long psync[SHMEM_BARRIER_SYNC_SIZE];

int main(int argc, char **argv) {
  shmem_init();
  int me = shmem_my_pe(), n = shmem_n_pes();
  long *never = shmem_calloc(1, sizeof(long));
  shmem_barrier_all();
  if (me == 1) {
    shmem_finalize(); /* ends once PE 0 is gone: PE 0 never finalizes */
    return 0;
  }
  if (argc > 1 && strcmp(argv[1], "wait") == 0)
    shmem_long_wait_until(never, SHMEM_CMP_NE, 0);
  else if (argc > 1 && strcmp(argv[1], "barrier_all") == 0)
    shmem_barrier_all();
  else
    shmem_barrier(0, 0, n, psync);
  printf("FAIL PE %d passed the blocking call\n", me);
  return 0;
}
