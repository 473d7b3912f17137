/* startpes.c: a program started with the deprecated start_pes, which
 * asks no shmem_finalize: the library finalizes it implicitly when it
 * exits. Each PE puts to the next and returns from main after a barrier,
 * as such programs do. An atexit handler registered before start_pes runs
 * after the library's (handlers run in reverse order) and prints what
 * shmem_my_pe() says then: -1 once the library has finalized. */
#include "check.h"

static long x;
static int me = -1;

static void after(void) { printf("PE %d at exit: shmem_my_pe() is %d\n", me, shmem_my_pe()); }

int main(void) {
  atexit(after);
  start_pes(0);
  me = _my_pe();
  int n = _num_pes();
  long v = me + 1;
  shmem_long_put(&x, &v, 1, (me + 1) % n);
  shmem_barrier_all();
  CHECK(x == (me + n - 1) % n + 1, "x is %ld", x);
  PASS("startpes");
  return 0;
}
