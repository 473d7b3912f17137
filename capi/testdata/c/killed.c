/* killed.c: the last PE dies; every other PE is blocked in a barrier,
 * which must end with goshmem's abort message naming the call instead of
 * hanging. */
#include <signal.h>
#include <stdio.h>
#include <shmem.h>

int main(void) {
  shmem_init();
  int me = shmem_my_pe(), n = shmem_n_pes();
  shmem_barrier_all();
  printf("PE %d ready\n", me);
  fflush(stdout);
  if (me == n - 1) raise(SIGKILL);
  shmem_barrier_all(); /* never completes: PE n-1 is gone */
  printf("FAIL PE %d passed the barrier\n", me);
  return 0;
}
