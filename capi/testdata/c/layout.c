/* layout.c: its two builds (-DLAYOUT=1, -DLAYOUT=2) have statics of the
 * same size holding different variables. A world that runs both must not
 * start: a put into one PE's variable would land in another variable of
 * its peer. One build alone starts, puts into a peer's static and checks
 * it arrived. */
#include "check.h"

#if LAYOUT == 2
int counters[16];
long total;
#else
long total;
char label[64];
#endif

int main(void) {
  shmem_init();
  int me = shmem_my_pe(), npes = shmem_n_pes();
  shmem_long_p(&total, 100 + me, (me + 1) % npes);
  shmem_barrier_all();
  CHECK(total == 100 + (me + npes - 1) % npes, "total %ld", total);
  PASS("layout");
  shmem_finalize();
  return 0;
}
