/* badctx.c: RMA and atomics on a handle that is no context:
 * SHMEM_CTX_INVALID (what a failed shmem_ctx_create leaves) and a
 * destroyed context. goshmem refuses each with "invalid context", on a
 * mapped peer as over the network (a mapped peer used to run them on the
 * default context), and writes nothing. SHMEMX_ERRORS_RETURN lets one run
 * try every call; PE 1's memory must stay zero. With the argument "abort",
 * the default error mode: the first call ends the job. */
#include "refused.h"

int main(int argc, char **argv) {
  shmem_init();
  int abort_mode = argc > 1 && strcmp(argv[1], "abort") == 0;
  if (!abort_mode) shmemx_set_error_mode(SHMEMX_ERRORS_RETURN);
  int me = shmem_my_pe();
  long *h = shmem_calloc(8, sizeof(long));
  long src[2] = {7, 7};
  shmem_ctx_t gone, team_gone;
  CHECK(shmem_ctx_create(0, &gone) == 0, "shmem_ctx_create");
  CHECK(shmem_team_create_ctx(SHMEM_TEAM_WORLD, 0, &team_gone) == 0, "shmem_team_create_ctx");
  shmem_ctx_long_p(gone, h + 7, 1, 1 - me); /* a live context works */
  shmem_ctx_quiet(gone);
  shmem_ctx_destroy(gone);
  shmem_ctx_destroy(team_gone);
  shmem_barrier_all();
  CHECK(h[7] == 1, "put on a live context: %ld", h[7]);
  h[7] = 0;
  shmem_barrier_all();
  if (me == 0) {
    shmem_ctx_long_put(SHMEM_CTX_INVALID, h, src, 2, 1);
    CHECK(!abort_mode, "shmem_ctx_long_put on SHMEM_CTX_INVALID returned");
    refused_as("shmem_ctx_long_put", "invalid context 0x0");
    shmem_ctx_long_p(SHMEM_CTX_INVALID, h + 2, 7, 1);
    refused_as("shmem_ctx_long_p", "invalid context 0x0");
    long v = shmem_ctx_long_atomic_fetch_add(SHMEM_CTX_INVALID, h + 3, 7, 1);
    refused_as("shmem_ctx_long_atomic_fetch_add", "invalid context 0x0");
    CHECK(v == 0, "fetch on no context returned %ld", v);
    shmem_ctx_long_atomic_add(gone, h + 4, 7, 1);
    refused_as("shmem_ctx_long_atomic_add", "invalid context");
    shmem_ctx_putmem_nbi(team_gone, h + 5, src, 8, 1);
    refused_as("shmem_ctx_putmem_nbi", "invalid context");
    long got = 0;
    shmem_ctx_long_get(SHMEM_CTX_INVALID, &got, h, 1, 1);
    refused_as("shmem_ctx_long_get", "invalid context 0x0");
    shmem_ctx_quiet(SHMEM_CTX_INVALID); /* the spec: no operation */
  }
  shmem_barrier_all();
  for (int i = 0; i < 8; i++) CHECK(h[i] == 0, "word %d of PE %d is %ld, want 0: a refused call wrote", i, me, h[i]);
  PASS("badctx");
  shmem_finalize();
  return 0;
}
