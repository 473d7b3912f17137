/* rest.c: the untyped routines the other programs do not call: start_pes,
 * shmem_query_thread, shmem_pcontrol, shmem_malloc_with_hints,
 * shmem_team_get_config, the deprecated shmem_wait, the context and _nbi
 * forms of putmem/getmem and putmem_signal, the team alltoallmem and
 * alltoallsmem, and the active-set broadcast32, collect64, fcollect32,
 * alltoall32, alltoalls32 and alltoalls64; results checked. Each PE prints
 * "rest ok". */
#include <stdint.h>
#include <string.h>
#include "check.h"

static long *psync;
static int me, n, next, left;

static void fresh_psync(void) {
  for (int i = 0; i < SHMEM_SYNC_SIZE; i++) psync[i] = SHMEM_SYNC_VALUE;
  shmem_barrier_all();
}

static void queries(void) {
  int provided = -1;
  shmem_query_thread(&provided);
  CHECK(provided >= SHMEM_THREAD_SINGLE && provided <= SHMEM_THREAD_MULTIPLE, "query_thread: %d", provided);
  shmem_pcontrol(1);
  shmem_pcontrol(0);
  shmem_pcontrol(1);
  long *h = shmem_malloc_with_hints(64, SHMEM_MALLOC_ATOMICS_REMOTE | SHMEM_MALLOC_SIGNAL_REMOTE);
  CHECK(h != NULL, "malloc_with_hints");
  h[0] = 0;
  shmem_barrier_all();
  shmem_long_atomic_add(h, me + 1, 0);
  shmem_barrier_all();
  if (me == 0) CHECK(h[0] == (long)n * (n + 1) / 2, "malloc_with_hints memory: %ld", h[0]);
  shmem_barrier_all();
  shmem_free(h);
  shmem_team_config_t conf = {.num_contexts = 2};
  shmem_team_t team;
  CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, n, &conf, SHMEM_TEAM_NUM_CONTEXTS, &team) == 0, "split");
  shmem_team_config_t got = {0};
  CHECK(shmem_team_get_config(team, SHMEM_TEAM_NUM_CONTEXTS, &got) == 0 && got.num_contexts == 2,
        "team_get_config: %d contexts", got.num_contexts);
  CHECK(shmem_team_get_config(SHMEM_TEAM_WORLD, SHMEM_TEAM_NUM_CONTEXTS, &got) == 0, "team_get_config(world)");
  shmem_team_destroy(team);
}

static void deprecated_wait(void) {
  long *w = shmem_calloc(1, sizeof(long));
  shmem_barrier_all();
  shmem_long_p(w, me + 5, next);
  shmem_wait(w, 0); /* until it is not 0 */
  CHECK(*w == left + 5, "shmem_wait: %ld", *w);
  shmem_barrier_all();
  shmem_free(w);
}

static void mem_forms(void) {
  shmem_ctx_t ctx;
  CHECK(shmem_ctx_create(0, &ctx) == 0, "ctx_create");
  char *w = shmem_calloc(64, 1), src[64], back[64];
  uint64_t *sig = shmem_calloc(3, sizeof(uint64_t));
  for (int k = 0; k < 64; k++) src[k] = (char)(me * 10 + k % 10);
  shmem_barrier_all();
  shmem_ctx_putmem_nbi(ctx, w, src, 16, next);
  shmem_ctx_putmem_signal(ctx, w + 16, src + 16, 16, &sig[0], 1, SHMEM_SIGNAL_SET, next);
  shmem_ctx_putmem_signal_nbi(ctx, w + 32, src + 32, 16, &sig[1], 1, SHMEM_SIGNAL_ADD, next);
  shmem_putmem_signal_nbi(w + 48, src + 48, 16, &sig[2], 1, SHMEM_SIGNAL_SET, next);
  shmem_ctx_quiet(ctx);
  shmem_quiet();
  shmem_uint64_wait_until_all(sig, 3, NULL, SHMEM_CMP_EQ, 1);
  shmem_barrier_all();
  for (int k = 0; k < 64; k++) CHECK(w[k] == (char)(left * 10 + k % 10), "putmem forms: [%d]=%d", k, w[k]);
  shmem_ctx_getmem(ctx, back, w, 16, next);
  shmem_ctx_getmem_nbi(ctx, back + 16, w + 16, 16, next);
  shmem_getmem_nbi(back + 32, w + 32, 32, next);
  shmem_ctx_quiet(ctx);
  shmem_quiet();
  CHECK(memcmp(back, src, 64) == 0, "getmem forms read wrong bytes");
  shmem_barrier_all();
  shmem_ctx_destroy(ctx);
  shmem_free(sig);
  shmem_free(w);
}

static void team_mem(void) {
  char *src = shmem_calloc(4 * n, 1), *dst = shmem_calloc(4 * n, 1);
  for (int k = 0; k < 4 * n; k++) src[k] = (char)(me * 16 + k);
  shmem_barrier_all();
  CHECK(shmem_alltoallmem(SHMEM_TEAM_WORLD, dst, src, 2) == 0, "alltoallmem");
  for (int pe = 0; pe < n; pe++)
    for (int b = 0; b < 2; b++) CHECK(dst[2 * pe + b] == (char)(pe * 16 + 2 * me + b), "alltoallmem: [%d]", 2 * pe + b);
  shmem_barrier_all();
  memset(dst, 0, 4 * n);
  shmem_barrier_all();
  /* One byte each, strides 2 (dest) and 3 (source). */
  CHECK(shmem_alltoallsmem(SHMEM_TEAM_WORLD, dst, src, 2, 3, 1) == 0, "alltoallsmem");
  for (int pe = 0; pe < n; pe++)
    CHECK(dst[2 * pe] == (char)(pe * 16 + 3 * me) && dst[2 * pe + 1] == 0, "alltoallsmem: [%d]", 2 * pe);
  shmem_barrier_all();
  shmem_free(dst);
  shmem_free(src);
}

static void active_set(void) {
  int32_t *s32 = shmem_calloc(4 * n, 4), *d32 = shmem_calloc(4 * n, 4);
  int64_t *s64 = shmem_calloc(4 * n, 8), *d64 = shmem_calloc(4 * n, 8);
  for (int k = 0; k < 4 * n; k++) {
    s32[k] = me * 100 + k;
    s64[k] = me * 1000 + k;
  }
  fresh_psync();
  shmem_broadcast32(d32, s32, 3, 1, 0, 0, n, psync); /* root: PE 1 of the set */
  if (me != 1)
    for (int k = 0; k < 3; k++) CHECK(d32[k] == 100 + k, "broadcast32: [%d]=%d", k, d32[k]);
  fresh_psync();
  shmem_collect64(d64, s64, me % 2 + 1, 0, 0, n, psync);
  for (int pe = 0, j = 0; pe < n; pe++)
    for (int k = 0; k < pe % 2 + 1; k++, j++) CHECK(d64[j] == pe * 1000 + k, "collect64: [%d]", j);
  fresh_psync();
  shmem_fcollect32(d32, s32, 2, 0, 0, n, psync);
  for (int pe = 0; pe < n; pe++)
    for (int k = 0; k < 2; k++) CHECK(d32[2 * pe + k] == pe * 100 + k, "fcollect32: [%d]", 2 * pe + k);
  fresh_psync();
  shmem_alltoall32(d32, s32, 1, 0, 0, n, psync);
  for (int pe = 0; pe < n; pe++) CHECK(d32[pe] == pe * 100 + me, "alltoall32: [%d]", pe);
  memset(d32, 0, 16 * n);
  memset(d64, 0, 32 * n);
  fresh_psync();
  shmem_alltoalls32(d32, s32, 2, 3, 1, 0, 0, n, psync);
  for (int pe = 0; pe < n; pe++) CHECK(d32[2 * pe] == pe * 100 + 3 * me && d32[2 * pe + 1] == 0, "alltoalls32: [%d]", 2 * pe);
  fresh_psync();
  shmem_alltoalls64(d64, s64, 2, 3, 1, 0, 0, n, psync);
  for (int pe = 0; pe < n; pe++) CHECK(d64[2 * pe] == pe * 1000 + 3 * me && d64[2 * pe + 1] == 0, "alltoalls64: [%d]", 2 * pe);
  shmem_barrier_all();
  shmem_free(d64);
  shmem_free(s64);
  shmem_free(d32);
  shmem_free(s32);
}

int main(void) {
  start_pes(0); /* the deprecated start-up: shmem_init */
  me = shmem_my_pe();
  n = shmem_n_pes();
  next = (me + 1) % n;
  left = (me + n - 1) % n;
  CHECK(n >= 2, "rest needs 2 PEs at least");
  psync = shmem_malloc(SHMEM_SYNC_SIZE * sizeof(long));
  CHECK(psync != NULL, "allocation");
  queries();
  deprecated_wait();
  mem_forms();
  team_mem();
  active_set();
  shmem_free(psync);
  PASS("rest");
  shmem_finalize();
  return 0;
}
