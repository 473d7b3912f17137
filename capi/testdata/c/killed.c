/* killed.c: the last PE dies while every other PE is blocked, in
 * shmem_barrier_all, (argument "wait") in shmem_long_wait_until on a
 * variable nobody sets, or (argument "aset") in the active-set
 * shmem_barrier: the blocked call must end with goshmem's abort message
 * naming it, not hang. With argument "return" the wait runs under
 * SHMEMX_ERRORS_RETURN: it must return, and the PE prints the recorded
 * error the same way and exits with status 1 itself. With argument "lock"
 * the last PE dies holding a static lock (its word on PE 0) that the
 * others wait for in shmem_set_lock. With "g", "static", "fetch" or
 * "test" the others spin in a loop of their own on calls that each return
 * at once: shmem_long_g of a word on the dead PE (a static one with
 * "static"), shmem_long_atomic_fetch of it, or shmem_long_test of a local
 * word only the dead PE would set. On shared memory each is a load from
 * the dead PE's mapped memory, or of the PE's own: the loop must still
 * end with goshmem's message naming the call and the failed PE. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <shmem.h>
#include <shmemx.h>
#include <unistd.h>

static long lk = 0;
static long sflag;

int main(int argc, char **argv) {
  shmem_init();
  int me = shmem_my_pe(), n = shmem_n_pes();
  int lock = argc > 1 && strcmp(argv[1], "lock") == 0;
  long *never = shmem_calloc(1, sizeof(long));
  long *out = shmem_calloc(1, sizeof(long));
  if (lock && me == n - 1) shmem_set_lock(&lk);
  shmem_barrier_all();
  printf("PE %d ready\n", me);
  /* PE n-1 dies only once every other PE has said it left the barrier
   * above: dying at once could take its last barrier signal along and
   * fail the others' barrier instead of the call under test. */
  if (me != n - 1) shmem_long_atomic_inc(out, n - 1);
  if (me == n - 1) {
    shmem_long_wait_until(out, SHMEM_CMP_EQ, n - 1);
    raise(SIGKILL);
  }
  static long psync[SHMEM_BARRIER_SYNC_SIZE];
  const char *mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "g") == 0)
    while (shmem_long_g(never, n - 1) == 0) {
    }
  else if (strcmp(mode, "static") == 0)
    while (shmem_long_g(&sflag, n - 1) == 0) {
    }
  else if (strcmp(mode, "fetch") == 0)
    while (shmem_long_atomic_fetch(never, n - 1) == 0) {
    }
  else if (strcmp(mode, "test") == 0)
    while (!shmem_long_test(never, SHMEM_CMP_NE, 0)) {
    }
  else if (strcmp(mode, "wait") == 0)
    shmem_long_wait_until(never, SHMEM_CMP_NE, 0); /* never satisfied: PE n-1 is gone */
  else if (argc > 1 && strcmp(argv[1], "return") == 0) {
    shmemx_set_error_mode(SHMEMX_ERRORS_RETURN);
    shmem_long_wait_until(never, SHMEM_CMP_NE, 0); /* returns: PE n-1 is gone */
    const char *e = shmemx_last_error();
    if (e && strstr(e, "shmem_long_wait_until: ")) {
      printf("goshmem: %s\n", e);
      fflush(stdout);
      _exit(1);
    }
  } else if (lock)
    shmem_set_lock(&lk); /* never acquired: its holder, PE n-1, is gone */
  else if (argc > 1 && strcmp(argv[1], "aset") == 0)
    shmem_barrier(0, 0, n, psync); /* never completes: PE n-1 is gone */
  else
    shmem_barrier_all(); /* never completes: PE n-1 is gone */
  printf("FAIL PE %d passed the blocking call\n", me);
  return 0;
}
