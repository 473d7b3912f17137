/* reinitctx.c: a context left undestroyed when a world ends is no context
 * of the next world (shmem_init again after shmem_finalize). A put through
 * its old handle is refused with "invalid context", on a mapped peer as
 * over the network, and writes nothing. The C side's table of contexts
 * outlived the world, so a mapped peer ran the put on the default
 * context. */
#include <stdint.h>
#include "refused.h"

int main(void) {
  shmem_init();
  shmem_ctx_t left;
  CHECK(shmem_ctx_create(0, &left) == 0, "shmem_ctx_create: %s", shmemx_last_error());
  shmem_finalize(); /* left is never destroyed */

  shmem_init();
  shmemx_set_error_mode(SHMEMX_ERRORS_RETURN);
  int me = shmem_my_pe();
  long *h = shmem_calloc(2, sizeof(long));
  if (me == 0) {
    shmem_ctx_long_p(left, h, 7, 1);
    refused_as("shmem_ctx_long_p", "invalid context");
    shmem_ctx_t fresh;
    CHECK(shmem_ctx_create(0, &fresh) == 0, "shmem_ctx_create in the second world: %s", shmemx_last_error());
    shmem_ctx_long_p(fresh, h + 1, 8, 1);
    shmem_ctx_quiet(fresh);
    shmem_ctx_destroy(fresh);
  }
  shmem_barrier_all();
  if (me == 1) {
    CHECK(h[0] == 0, "the old world's context wrote %ld", h[0]);
    CHECK(h[1] == 8, "the new world's context wrote %ld, want 8", h[1]);
  }
  PASS("reinitctx");
  shmem_finalize();
  return 0;
}
