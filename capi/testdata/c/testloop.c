/* testloop.c: PEs 0 and 1 play ping-pong, each spinning on shmem_test
 * (odd rounds) or shmem_signal_fetch (even ones) for the other's put, as
 * many programs wait: every round's value arrives. Over TCP a spinning PE
 * once kept its network reader off its core (4-6 ms a round trip). */
#include "check.h"

int main(void) {
  shmem_init();
  int me = shmem_my_pe();
  uint64_t *flag = shmem_calloc(1, sizeof(uint64_t));
  CHECK(flag != NULL, "shmem_calloc");
  shmem_barrier_all();
  if (me < 2) {
    for (uint64_t i = 1; i <= 300; i++) {
      if ((i % 2 == 1) == (me == 1)) {
        if (i % 2 == 1)
          while (!shmem_uint64_test(flag, SHMEM_CMP_EQ, i)) {
          }
        else
          while (shmem_signal_fetch(flag) != i) {
          }
        continue;
      }
      shmem_uint64_p(flag, i, 1 - me);
      shmem_quiet();
    }
    CHECK(*flag == (me == 0 ? 300 : 299), "last value %lu", (unsigned long)*flag);
  }
  shmem_barrier_all();
  shmem_free(flag);
  PASS("testloop");
  shmem_finalize();
  return 0;
}
