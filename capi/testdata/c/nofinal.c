/* nofinal.c: a program that calls shmem_init but returns from main
 * without shmem_finalize, which the spec requires of it: every PE (no
 * argument) or only the last ("one", the others finalize as they should).
 * Each PE puts to the next and passes a barrier first. goshmem finalizes
 * such a PE at exit, as SOS does, saying so: an atexit handler registered
 * before shmem_init runs after the library's and prints what
 * shmem_my_pe() says then, -1 once the library has finalized. */
#include <string.h>
#include "check.h"

static long x;
static int me = -1;

static void after(void) { printf("PE %d at exit: shmem_my_pe() is %d\n", me, shmem_my_pe()); }

int main(int argc, char **argv) {
  atexit(after);
  shmem_init();
  me = shmem_my_pe();
  int n = shmem_n_pes();
  long v = me + 1;
  shmem_long_put(&x, &v, 1, (me + 1) % n);
  shmem_barrier_all();
  CHECK(x == (me + n - 1) % n + 1, "x is %ld", x);
  PASS("nofinal");
  if (argc > 1 && strcmp(argv[1], "one") == 0 && me != n - 1) shmem_finalize();
  return 0;
}
