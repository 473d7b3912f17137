/* spin.c: the last PE dies while every other PE spins in a loop of its
 * own on calls that each return at once: shmem_long_g of a flag on the
 * dead PE ("g", or "static" for a static flag), shmem_long_atomic_fetch of
 * it ("fetch"), or
 * shmem_long_test of a local flag only the dead PE would set ("test").
 * On shared memory each such call is a load from the dead PE's mapped
 * memory, or of the PE's own: the loop must still end with goshmem's
 * message naming the call and the failed PE, not spin forever. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <shmem.h>

static long sflag;

int main(int argc, char **argv) {
  shmem_init();
  int me = shmem_my_pe(), n = shmem_n_pes();
  const char *mode = argc > 1 ? argv[1] : "g";
  long *flag = shmem_calloc(1, sizeof(long));
  long *out = shmem_calloc(1, sizeof(long));
  shmem_barrier_all();
  printf("PE %d ready\n", me);
  /* PE n-1 dies only once every other PE has left the barrier above. */
  if (me != n - 1) shmem_long_atomic_inc(out, n - 1);
  if (me == n - 1) {
    shmem_long_wait_until(out, SHMEM_CMP_EQ, n - 1);
    raise(SIGKILL);
  }
  if (strcmp(mode, "fetch") == 0)
    while (shmem_long_atomic_fetch(flag, n - 1) == 0) {
    }
  else if (strcmp(mode, "static") == 0)
    while (shmem_long_g(&sflag, n - 1) == 0) {
    }
  else if (strcmp(mode, "test") == 0)
    while (!shmem_long_test(flag, SHMEM_CMP_NE, 0)) {
    }
  else
    while (shmem_long_g(flag, n - 1) == 0) {
    }
  printf("FAIL PE %d left its loop\n", me);
  return 0;
}
