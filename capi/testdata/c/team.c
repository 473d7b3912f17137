/* team.c: teams and the team-based collectives. */
#include <complex.h>
#include "check.h"

int main(void) {
  shmem_init();
  int me = shmem_my_pe(), n = shmem_n_pes();
  CHECK(shmem_team_my_pe(SHMEM_TEAM_WORLD) == me && shmem_team_n_pes(SHMEM_TEAM_WORLD) == n, "world team");
  long *src = shmem_malloc(4 * sizeof(long));
  long *dst = shmem_calloc(4 * n, sizeof(long));
  for (int k = 0; k < 4; k++) src[k] = me * 10 + k;
  shmem_barrier_all();

  CHECK(shmem_long_sum_reduce(SHMEM_TEAM_WORLD, dst, src, 4) == 0, "sum_reduce");
  for (int k = 0; k < 4; k++) CHECK(dst[k] == 10L * n * (n - 1) / 2 + (long)k * n, "sum[%d]=%ld", k, dst[k]);
  CHECK(shmem_max_reduce(SHMEM_TEAM_WORLD, dst, src, 4) == 0, "generic max_reduce");
  CHECK(dst[0] == (n - 1) * 10L, "max %ld", dst[0]);

  CHECK(shmem_long_broadcast(SHMEM_TEAM_WORLD, dst, src, 4, n - 1) == 0, "broadcast");
  CHECK(dst[3] == (n - 1) * 10L + 3, "broadcast %ld", dst[3]);
  CHECK(shmem_long_fcollect(SHMEM_TEAM_WORLD, dst, src, 2) == 0, "fcollect");
  for (int p = 0; p < n; p++) CHECK(dst[2 * p + 1] == p * 10L + 1, "fcollect[%d]", p);
  /* collect: PE p contributes p+1 elements */
  CHECK(shmem_long_collect(SHMEM_TEAM_WORLD, dst, src, (size_t)(me % 3) + 1) == 0, "collect: %s", "");
  long off = 0;
  for (int p = 0; p < n; p++) {
    CHECK(dst[off] == p * 10L, "collect from %d at %ld: %ld", p, off, dst[off]);
    off += p % 3 + 1;
  }
  /* collect where PE 0 contributes nothing: it still takes part */
  CHECK(shmem_long_collect(SHMEM_TEAM_WORLD, dst, src, me ? 1 : 0) == 0, "collect with an empty PE 0");
  for (int p = 1; p < n; p++) CHECK(dst[p - 1] == p * 10L, "collect with an empty PE 0: [%d] = %ld", p - 1, dst[p - 1]);
  /* alltoall: element k of my source goes to PE k */
  long *a2a = shmem_malloc(n * sizeof(long));
  for (int p = 0; p < n; p++) a2a[p] = me * 100 + p;
  shmem_barrier_all();
  CHECK(shmem_long_alltoall(SHMEM_TEAM_WORLD, dst, a2a, 1) == 0, "alltoall");
  for (int p = 0; p < n; p++) CHECK(dst[p] == p * 100 + me, "alltoall[%d]=%ld", p, dst[p]);

  /* strided alltoall of 16-byte elements (two 8-byte streams in Go) and
   * the untyped collectives */
  long double *zs = shmem_malloc(2 * n * sizeof(long double));
  long double *zd = shmem_calloc(2 * n, sizeof(long double));
  for (int p = 0; p < n; p++) zs[2 * p] = me + p / 1024.0L;
  shmem_barrier_all();
  CHECK(shmem_longdouble_alltoalls(SHMEM_TEAM_WORLD, zd, zs, 2, 2, 1) == 0, "alltoalls");
  for (int p = 0; p < n; p++) CHECK(zd[2 * p] == p + me / 1024.0L, "alltoalls[%d]", p);
  char *bs = shmem_malloc(4), *bd = shmem_calloc(4 * n, 1);
  for (int k = 0; k < 4; k++) bs[k] = (char)(me * 4 + k);
  shmem_barrier_all();
  CHECK(shmem_broadcastmem(SHMEM_TEAM_WORLD, bd, bs, 4, 0) == 0 && bd[3] == 3, "broadcastmem");
  CHECK(shmem_fcollectmem(SHMEM_TEAM_WORLD, bd, bs, 2) == 0 && bd[2 * (n - 1)] == (char)((n - 1) * 4), "fcollectmem");
  CHECK(shmem_collectmem(SHMEM_TEAM_WORLD, bd, bs, 1) == 0 && bd[n - 1] == (char)((n - 1) * 4), "collectmem");

  /* complex and long double reductions: no Go element type, done in C */
  double _Complex *cz = shmem_malloc(sizeof(double _Complex));
  double _Complex *cr = shmem_malloc(sizeof(double _Complex));
  long double *ld = shmem_malloc(sizeof(long double)), *ldr = shmem_malloc(sizeof(long double));
  *cz = me + 1.0 * I;
  *ld = me + 0.25L;
  shmem_barrier_all();
  CHECK(shmem_complexd_sum_reduce(SHMEM_TEAM_WORLD, cr, cz, 1) == 0, "complexd");
  CHECK(creal(*cr) == n * (n - 1) / 2.0 && cimag(*cr) == n, "complexd sum %f%+fi", creal(*cr), cimag(*cr));
  CHECK(shmem_longdouble_max_reduce(SHMEM_TEAM_WORLD, ldr, ld, 1) == 0, "longdouble");
  CHECK(*ldr == n - 1 + 0.25L, "longdouble max");

  int *tv = shmem_calloc(1, sizeof(int));
  /* split: the even PEs */
  shmem_team_t even;
  CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (n + 1) / 2, NULL, 0, &even) == 0, "split");
  if (me % 2 == 0) {
    CHECK(even != SHMEM_TEAM_INVALID && shmem_team_my_pe(even) == me / 2, "even team pe");
    CHECK(shmem_team_translate_pe(even, 1 % shmem_team_n_pes(even), SHMEM_TEAM_WORLD) == 2 % (2 * ((n + 1) / 2)), "translate");
    CHECK(shmem_team_sync(even) == 0, "team sync");
    CHECK(shmem_team_ptr(even, tv, 0) == shmem_ptr(tv, 0), "team_ptr to team PE 0");
    CHECK(shmem_team_ptr(even, tv, shmem_team_n_pes(even)) == NULL, "team_ptr past the team");
    int *iv = shmem_malloc(sizeof(int)); /* world-collective: odd PEs do too below */
    (void)iv;
  } else {
    CHECK(even == SHMEM_TEAM_INVALID, "odd PE got a team");
    CHECK(shmem_team_ptr(even, tv, 0) == NULL, "team_ptr on SHMEM_TEAM_INVALID");
    int *iv = shmem_malloc(sizeof(int));
    (void)iv;
  }
  shmem_ctx_t ctx;
  if (even != SHMEM_TEAM_INVALID) {
    CHECK(shmem_team_create_ctx(even, 0, &ctx) == 0, "team ctx");
    shmem_team_t back;
    CHECK(shmem_ctx_get_team(ctx, &back) == 0 && back == even, "ctx_get_team");
    /* a team's context numbers PEs within the team */
    int tn = shmem_team_n_pes(even), tme = shmem_team_my_pe(even);
    shmem_ctx_int_p(ctx, tv, 100 + tme, (tme + 1) % tn);
    shmem_ctx_quiet(ctx);
    CHECK(shmem_team_sync(even) == 0, "team sync");
    CHECK(*tv == 100 + (tme + tn - 1) % tn, "team ctx put: %d", *tv);
    shmem_ctx_destroy(ctx);
    shmem_team_destroy(even);
  }
  shmem_team_t x, y;
  CHECK(shmem_team_split_2d(SHMEM_TEAM_WORLD, 2, NULL, 0, &x, NULL, 0, &y) == 0, "split_2d");
  CHECK(shmem_team_n_pes(x) == (n < 2 ? n : 2), "x size %d", shmem_team_n_pes(x));
  shmem_sync(SHMEM_TEAM_WORLD);
  shmem_barrier_all();
  PASS("team");
  shmem_finalize();
  return 0;
}
