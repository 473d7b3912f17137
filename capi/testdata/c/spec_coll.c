/* spec_coll.c: the scenarios of the OpenSHMEM 1.5 specification's
 * synchronization and collective examples (shmem_barrier on an active
 * set, shmem_sync on strided teams, shmem_broadcast, shmem_collect with a
 * lock around the prints, shmem_reduce, shmem_alltoall, shmem_alltoalls,
 * and the pWrk/pSync sum_to_all of the contexts example), written for this
 * test: the same data, calls and expected values, each checked here.
 * Every PE prints "spec_coll ok" after all. */
#include <stdint.h>
#include "check.h"

static int barrier_x = 10101;
static long barrier_psync[SHMEM_BARRIER_SYNC_SIZE];
static int sync_x = 10101;
static long bcast_src[4], bcast_dst[4];
static long print_lock;
static int max_count, max_total;
static long reduce_pwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
static long reduce_psync[SHMEM_REDUCE_SYNC_SIZE];
static long done_here, done_all;

/* shmem_barrier: the even PEs put 4 into the next even PE's x (circular)
 * and barrier among themselves; the odd PEs keep 10101. */
static void active_set_barrier(int me, int n) {
  for (int i = 0; i < SHMEM_BARRIER_SYNC_SIZE; i++) barrier_psync[i] = SHMEM_SYNC_VALUE;
  shmem_barrier_all();
  if (me % 2 == 0) {
    shmem_p(&barrier_x, 4, (me + 2) % n);
    shmem_barrier(0, 1, n / 2 + n % 2, barrier_psync);
  }
  printf("%d: x = %d\n", me, barrier_x);
  CHECK(barrier_x == (me % 2 == 0 ? 4 : 10101), "barrier: x=%d", barrier_x);
  shmem_barrier_all();
}

/* shmem_sync: a team of PEs 2, 4, ... and one of PEs 3, 6, ... each put
 * into the next member's x and sync; then every PE checks what it holds. */
static void team_sync(int me, int n) {
  shmem_team_t twos = SHMEM_TEAM_INVALID, threes = SHMEM_TEAM_INVALID;
  if (n > 2) CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 2, 2, (n - 1) / 2, NULL, 0, &twos) == 0, "split twos");
  if (n > 3) CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 3, 3, (n - 1) / 3, NULL, 0, &threes) == 0, "split threes");
  if (twos != SHMEM_TEAM_INVALID) {
    int t = shmem_team_my_pe(twos), tn = shmem_team_n_pes(twos);
    shmem_p(&sync_x, 2, shmem_team_translate_pe(twos, (t + 1) % tn, SHMEM_TEAM_WORLD));
    shmem_quiet();
    shmem_sync(twos);
  }
  shmem_sync(SHMEM_TEAM_WORLD);
  if (threes != SHMEM_TEAM_INVALID) {
    int t = shmem_team_my_pe(threes), tn = shmem_team_n_pes(threes);
    shmem_p(&sync_x, 3, shmem_team_translate_pe(threes, (t + 1) % tn, SHMEM_TEAM_WORLD));
    shmem_quiet();
    shmem_sync(threes);
  }
  int want = me && me % 3 == 0 ? 3 : me && me % 2 == 0 ? 2 : 10101;
  CHECK(sync_x == want, "sync: x=%d want %d", sync_x, want);
  if (twos != SHMEM_TEAM_INVALID) shmem_team_destroy(twos);
  if (threes != SHMEM_TEAM_INVALID) shmem_team_destroy(threes);
  shmem_barrier_all();
}

/* shmem_broadcast: PE 0's 0, 1, 2, 3 reach every PE's dest. */
static void broadcast(int me) {
  if (me == 0)
    for (int i = 0; i < 4; i++) bcast_src[i] = i;
  shmem_barrier_all();
  CHECK(shmem_broadcast(SHMEM_TEAM_WORLD, bcast_dst, bcast_src, 4, 0) == 0, "broadcast");
  printf("%d: %ld, %ld, %ld, %ld\n", me, bcast_dst[0], bcast_dst[1], bcast_dst[2], bcast_dst[3]);
  for (int i = 0; i < 4; i++) CHECK(bcast_dst[i] == i, "broadcast: dest[%d]=%ld", i, bcast_dst[i]);
}

/* shmem_collect: PE k contributes k+1 numbers, so that the gathered
 * result counts 0, 1, 2, ... up to n(n+1)/2 - 1; the prints are in a lock. */
static void collect(int me, int n) {
  int mine = me + 1, total = n * (n + 1) / 2;
  int *src = shmem_malloc(n * sizeof(int)), *dst = shmem_malloc(total * sizeof(int));
  CHECK(src && dst, "collect: allocation");
  for (int i = 0; i < mine; i++) src[i] = me * (me + 1) / 2 + i;
  for (int i = 0; i < total; i++) dst[i] = -9999;
  shmem_team_sync(SHMEM_TEAM_WORLD);
  CHECK(shmem_int_collect(SHMEM_TEAM_WORLD, dst, src, mine) == 0, "collect");
  shmem_set_lock(&print_lock);
  printf("%d: %d", me, dst[0]);
  for (int i = 1; i < total; i++) printf(", %d", dst[i]);
  printf("\n");
  shmem_clear_lock(&print_lock);
  for (int i = 0; i < total; i++) CHECK(dst[i] == i, "collect: dest[%d]=%d", i, dst[i]);
  shmem_barrier_all();
  shmem_free(dst);
  shmem_free(src);
}

/* shmem_reduce: each PE marks where its values are maximal (n-1); an OR
 * reduction finds where any PE had one and a sum counts them. The
 * spec's example draws the values with rand(); here they are (me+i)%n so
 * that the answer is known: at every index exactly one PE has n-1. */
static void reduce(int me, int n) {
  enum { N = 32 };
  int *values = shmem_malloc(N * sizeof(int));
  unsigned char *is_max = shmem_malloc(N), *is_max_all = shmem_malloc(N);
  CHECK(values && is_max && is_max_all, "reduce: allocation");
  max_count = 0;
  for (int i = 0; i < N; i++) {
    values[i] = (me + i) % n;
    is_max[i] = values[i] == n - 1;
    max_count += is_max[i];
  }
  shmem_sync(SHMEM_TEAM_WORLD);
  CHECK(shmem_or_reduce(SHMEM_TEAM_WORLD, is_max_all, is_max, N) == 0, "or_reduce");
  CHECK(shmem_sum_reduce(SHMEM_TEAM_WORLD, &max_total, &max_count, 1) == 0, "sum_reduce");
  if (me == 0) printf("Found %d maximal random numbers across all PEs.\n", max_total);
  CHECK(max_total == N, "reduce: %d maximal values, want %d (one PE per index)", max_total, N);
  for (int i = 0; i < N; i++) CHECK(is_max_all[i] == 1, "reduce: index %d has no maximal value", i);
  shmem_barrier_all();
  shmem_free(is_max_all);
  shmem_free(is_max);
  shmem_free(values);
}

/* shmem_alltoall: PE p sends me+p to every PE, two of each. */
static void alltoall(int me, int n) {
  const int count = 2;
  int64_t *dst = shmem_malloc(count * n * sizeof(int64_t)), *src = shmem_malloc(count * n * sizeof(int64_t));
  CHECK(dst && src, "alltoall: allocation");
  for (int pe = 0; pe < n; pe++)
    for (int i = 0; i < count; i++) {
      src[pe * count + i] = me + pe;
      dst[pe * count + i] = 9999;
    }
  shmem_team_sync(SHMEM_TEAM_WORLD);
  CHECK(shmem_int64_alltoall(SHMEM_TEAM_WORLD, dst, src, count) == 0, "alltoall");
  for (int pe = 0; pe < n; pe++)
    for (int i = 0; i < count; i++)
      CHECK(dst[pe * count + i] == pe + me, "alltoall: dest[%d]=%lld", pe * count + i, (long long)dst[pe * count + i]);
  shmem_free(src);
  shmem_free(dst);
}

/* shmem_alltoalls: the same with strides 3 at the source, 2 at the dest. */
static void alltoalls(int me, int n) {
  const int count = 2;
  const ptrdiff_t dst_stride = 2, src_stride = 3;
  int64_t *dst = shmem_malloc(count * dst_stride * n * sizeof(int64_t));
  int64_t *src = shmem_malloc(count * src_stride * n * sizeof(int64_t));
  CHECK(dst && src, "alltoalls: allocation");
  for (int pe = 0; pe < n; pe++)
    for (int i = 0; i < count; i++) {
      src[src_stride * (pe * count + i)] = me + pe;
      dst[dst_stride * (pe * count + i)] = 9999;
    }
  shmem_team_sync(SHMEM_TEAM_WORLD);
  CHECK(shmem_int64_alltoalls(SHMEM_TEAM_WORLD, dst, src, dst_stride, src_stride, count) == 0, "alltoalls");
  for (int pe = 0; pe < n; pe++)
    for (int i = 0; i < count; i++) {
      int j = dst_stride * (pe * count + i);
      CHECK(dst[j] == pe + me, "alltoalls: dest[%d]=%lld", j, (long long)dst[j]);
    }
  shmem_free(src);
  shmem_free(dst);
}

/* The contexts example's closing reduction: the active-set sum_to_all with
 * static pWrk and pSync, over every PE. */
static void sum_to_all(int me, int n) {
  for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++) reduce_psync[i] = SHMEM_SYNC_VALUE;
  done_here = 100 + me;
  shmem_barrier_all();
  shmem_long_sum_to_all(&done_all, &done_here, 1, 0, 0, n, reduce_pwrk, reduce_psync);
  CHECK(done_all == 100L * n + (long)n * (n - 1) / 2, "sum_to_all: %ld", done_all);
}

int main(void) {
  shmem_init();
  int me = shmem_my_pe(), n = shmem_n_pes();
  CHECK(n >= 2, "the examples need 2 PEs at least");
  active_set_barrier(me, n);
  team_sync(me, n);
  broadcast(me);
  collect(me, n);
  reduce(me, n);
  alltoall(me, n);
  alltoalls(me, n);
  sum_to_all(me, n);
  PASS("spec_coll");
  shmem_finalize();
  return 0;
}
