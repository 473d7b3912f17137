/* gexit.c: the last PE calls shmem_global_exit(7) while the others wait in
 * a barrier: the job ends with status 7, and no PE passes the barrier. */
#include "check.h"

int main(void) {
  shmem_init();
  int me = shmem_my_pe(), n = shmem_n_pes();
  shmem_barrier_all();
  if (me == n - 1) {
    printf("PE %d exits\n", me);
    shmem_global_exit(7);
  }
  shmem_barrier_all();
  printf("FAIL PE %d passed the barrier\n", me);
  shmem_finalize();
  return 0;
}
