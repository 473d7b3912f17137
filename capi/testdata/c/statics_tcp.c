/* statics_tcp.c: run with TCP between the PEs (shmemrun --network), where
 * no peer's statics are mapped. A put into a peer's static fails with the
 * documented message naming the call, the address and the PE; statics on
 * this PE itself still work; with the default error mode the failure ends
 * the program with that message (the last put). */
#include <string.h>
#include <shmemx.h>
#include "check.h"

static long dest[10], bsrc[10];

int main(void) {
  shmem_init();
  int me = shmem_my_pe();
  long src[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  shmem_long_put(dest, src, 10, me); /* to itself: no host is crossed */
  CHECK(dest[9] == 10, "put to self %ld", dest[9]);
  CHECK(shmem_ptr(dest, 1 - me) == NULL, "shmem_ptr of a peer's static over TCP");
  shmemx_set_error_mode(SHMEMX_ERRORS_RETURN);
  shmem_long_put(dest, src, 10, 1 - me);
  const char *e = shmemx_last_error();
  char pe[16];
  snprintf(pe, sizeof pe, "PE %d", 1 - me);
  CHECK(strstr(e, "shmem_long_put: ") && strstr(e, pe) && strstr(e, "0x") &&
            strstr(e, "static data is symmetric only between PEs on one host; use shmem_malloc for data that crosses hosts"),
        "error text: %s", e);
  shmem_long_atomic_add(&dest[0], 1, 1 - me);
  CHECK(strstr(shmemx_last_error(), "shmem_long_atomic_add: "), "atomic: %s", shmemx_last_error());
  /* A static lock's word is on PE 0, which PE 1 cannot reach. */
  static long lock;
  if (me == 1) {
    shmem_set_lock(&lock);
    CHECK(strstr(shmemx_last_error(), "shmem_set_lock: ") && strstr(shmemx_last_error(), "PE 0 is not mapped here"),
          "lock: %s", shmemx_last_error());
  }
  /* A team collective on statics: PE 1 cannot get PE 0's source. */
  int rc = shmem_long_broadcast(SHMEM_TEAM_WORLD, dest, bsrc, 10, 0);
  if (me == 1)
    CHECK(rc != 0 && strstr(shmemx_last_error(), "shmem_long_broadcast: ") &&
              strstr(shmemx_last_error(), "static data is symmetric only between PEs on one host"),
          "broadcast: rc %d, %s", rc, shmemx_last_error());
  shmem_barrier_all();
  PASS("statics-tcp");
  shmem_barrier_all();
  shmemx_set_error_mode(SHMEMX_ERRORS_ABORT);
  if (me == 0) shmem_long_put(dest, src, 10, 1); /* ends the job with the message */
  shmem_barrier_all();
  printf("FAIL PE %d: the put to a static over TCP returned\n", me);
  return 0;
}
