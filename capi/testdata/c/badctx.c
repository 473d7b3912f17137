/* badctx.c: RMA and atomics on a handle that is no context:
 * SHMEM_CTX_INVALID (what a failed shmem_ctx_create leaves) and a
 * destroyed context. goshmem refuses each with "invalid context", on a
 * mapped peer as over the network (a mapped peer used to run them on the
 * default context), and writes nothing. So is a made-up handle past the
 * C side's table of contexts (4096 and more), which a mapped peer used to
 * run on the default context. SHMEMX_ERRORS_RETURN lets one run try every
 * call; PE 1's memory must stay zero. With the argument "abort", the
 * default error mode: the first call ends the job.
 *
 * First, 4200 contexts made and destroyed one after another: the next
 * world and team contexts still work, addressing the right PEs (handles
 * used to grow past the table, where a team context could not be made
 * and a world one ran unchecked). */
#include <stdint.h>
#include "refused.h"

/* churn makes and destroys n contexts, then puts, through a new world
 * context and a new context on SHMEM_TEAM_SHARED, this PE's number plus 1
 * into words 0 and 1 of the next PE (in the world, in the team). */
static void churn(long *h, int n) {
  int me = shmem_my_pe(), np = shmem_n_pes();
  for (int i = 0; i < n; i++) {
    shmem_ctx_t c;
    CHECK(shmem_ctx_create(0, &c) == 0, "shmem_ctx_create number %d: %s", i, shmemx_last_error());
    shmem_ctx_destroy(c);
  }
  shmem_ctx_t w, t;
  CHECK(shmem_ctx_create(0, &w) == 0, "shmem_ctx_create after %d: %s", n, shmemx_last_error());
  CHECK(shmem_team_create_ctx(SHMEM_TEAM_SHARED, 0, &t) == 0, "shmem_team_create_ctx after %d: %s", n, shmemx_last_error());
  int tme = shmem_team_my_pe(SHMEM_TEAM_SHARED), tn = shmem_team_n_pes(SHMEM_TEAM_SHARED);
  shmem_ctx_long_p(w, h, me + 1, (me + 1) % np);
  shmem_ctx_long_p(t, h + 1, me + 1, (tme + 1) % tn);
  shmem_ctx_quiet(w);
  shmem_ctx_quiet(t);
  shmem_barrier_all();
  int from = shmem_team_translate_pe(SHMEM_TEAM_SHARED, (tme + tn - 1) % tn, SHMEM_TEAM_WORLD);
  CHECK(h[0] == (me + np - 1) % np + 1, "world context after %d: word 0 is %ld", n, h[0]);
  CHECK(h[1] == from + 1, "team context after %d: word 1 is %ld, want %d", n, h[1], from + 1);
  shmem_ctx_destroy(w);
  shmem_ctx_destroy(t);
  h[0] = h[1] = 0;
  shmem_barrier_all();
}

int main(int argc, char **argv) {
  shmem_init();
  int abort_mode = argc > 1 && strcmp(argv[1], "abort") == 0;
  if (!abort_mode) shmemx_set_error_mode(SHMEMX_ERRORS_RETURN);
  int me = shmem_my_pe();
  long *h = shmem_calloc(8, sizeof(long));
  if (!abort_mode) churn(h, 4200);
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
    shmem_ctx_t past = (shmem_ctx_t)(uintptr_t)4096, far = (shmem_ctx_t)(uintptr_t)0x10000;
    shmem_ctx_long_put(past, h, src, 2, 1);
    refused_as("shmem_ctx_long_put", "invalid context 0x1000");
    shmem_ctx_long_p(far, h + 2, 7, 1);
    refused_as("shmem_ctx_long_p", "invalid context 0x10000");
    shmem_ctx_putmem_nbi(far, h + 5, src, 8, 1);
    refused_as("shmem_ctx_putmem_nbi", "invalid context 0x10000");
    shmem_ctx_long_iput(far, h, src, 2, 1, 2, 1);
    refused_as("shmem_ctx_long_iput", "invalid context 0x10000");
    shmem_ctx_putmem_signal(far, h + 5, src, 8, (uint64_t *)(h + 6), 1, SHMEM_SIGNAL_SET, 1);
    refused_as("shmem_ctx_putmem_signal", "invalid context 0x10000");
    v = shmem_ctx_long_atomic_fetch_add(past, h + 3, 7, 1);
    refused_as("shmem_ctx_long_atomic_fetch_add", "invalid context 0x1000");
    CHECK(v == 0, "fetch on a made-up context returned %ld", v);
    shmem_ctx_long_atomic_add(far, h + 4, 7, 1);
    refused_as("shmem_ctx_long_atomic_add", "invalid context 0x10000");
    shmem_ctx_long_atomic_fetch_add_nbi(far, &got, h + 3, 7, 1);
    refused_as("shmem_ctx_long_atomic_fetch_add_nbi", "invalid context 0x10000");
    got = 0;
    shmem_ctx_long_get(far, &got, h + 7, 1, 1);
    refused_as("shmem_ctx_long_get", "invalid context 0x10000");
    shmem_ctx_destroy(far);
    refused_as("shmem_ctx_destroy", "invalid context 0x10000");
  }
  shmem_barrier_all();
  for (int i = 0; i < 8; i++) CHECK(h[i] == 0, "word %d of PE %d is %ld, want 0: a refused call wrote", i, me, h[i]);
  PASS("badctx");
  shmem_finalize();
  return 0;
}
