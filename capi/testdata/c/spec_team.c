/* spec_team.c: the scenarios of the OpenSHMEM 1.5 specification's team
 * and context examples (shmem_team_split_strided, shmem_team_split_2d,
 * shmem_team_translate_pe, contexts made on teams, and private contexts
 * in threads sharing out tasks with fetch-increments, where the spec uses
 * OpenMP and this uses two pthreads, and a library's thread-local
 * context, private if it can be, else the default), written for this test: the same
 * calls and expected values, each checked here. Every PE prints
 * "spec_team ok" after all. */
#include <pthread.h>
#include "check.h"

static int val_2, val_3, both_sum;
static long task_counter;
static long done_here, done_all;
static long pwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
static long psync[SHMEM_REDUCE_SYNC_SIZE];

enum { NTASKS = 1024, THREADS = 2 };

/* shmem_team_split_strided: the even PEs form a team of n/2. */
static void split_strided(int me, int n) {
  shmem_team_t evens;
  CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, n / 2, NULL, 0, &evens) == 0, "split_strided");
  if (evens != SHMEM_TEAM_INVALID) {
    CHECK(me % 2 == 0 && shmem_team_my_pe(evens) == me / 2 && shmem_team_n_pes(evens) == n / 2,
          "split_strided: PE %d is %d of %d", me, shmem_team_my_pe(evens), shmem_team_n_pes(evens));
    shmem_team_destroy(evens);
  } else {
    CHECK(me % 2 == 1, "split_strided: even PE %d left out", me);
  }
}

/* shmem_team_translate_pe: a member's team number maps back to its own. */
static void translate_pe(int me, int n) {
  shmem_team_t evens;
  CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (n + 1) / 2, NULL, 0, &evens) == 0, "split for translate");
  if (evens != SHMEM_TEAM_INVALID) {
    int world = shmem_team_translate_pe(evens, shmem_team_my_pe(evens), SHMEM_TEAM_WORLD);
    CHECK(world == me, "translate_pe: %d, want %d", world, me);
    shmem_team_destroy(evens);
  }
}

/* The spec's dims: x the first divisor of n at or below ceil(cbrt(n)),
 * then y the first divisor of n/x at or below ceil(sqrt(n/x)). */
static int first_divisor(int n, int root) {
  int d = 1;
  while (d * (root == 3 ? d * d : d) < n) d++;
  while (n % d) d--;
  return d;
}

/* shmem_team_split_2d: the world as an x*y*z grid, split twice; each PE
 * prints its coordinates in turn, and they must number it. */
static void split_2d(int me, int n) {
  int xdim = first_divisor(n, 3), ydim = first_divisor(n / xdim, 2), zdim = n / xdim / ydim;
  if (me == 0) printf("xdim = %d, ydim = %d, zdim = %d\n", xdim, ydim, zdim);
  shmem_team_t xteam, yzteam, yteam, zteam;
  CHECK(shmem_team_split_2d(SHMEM_TEAM_WORLD, xdim, NULL, 0, &xteam, NULL, 0, &yzteam) == 0, "split_2d x");
  CHECK(shmem_team_split_2d(yzteam, ydim, NULL, 0, &yteam, NULL, 0, &zteam) == 0, "split_2d yz");
  shmem_team_destroy(yzteam);
  int x = shmem_team_my_pe(xteam), y = shmem_team_my_pe(yteam), z = shmem_team_my_pe(zteam);
  for (int k = 0; k < n; k++) {
    if (k == me) printf("(%d, %d, %d) is mype = %d\n", x, y, z, me);
    shmem_team_sync(SHMEM_TEAM_WORLD);
  }
  CHECK(me == x + xdim * (y + ydim * z), "split_2d: PE %d at (%d, %d, %d)", me, x, y, z);
  shmem_team_destroy(xteam);
  shmem_team_destroy(yteam);
  shmem_team_destroy(zteam);
}

/* Contexts on teams: a team of every second PE and one of every third,
 * each with a context; each member puts its team number to the next
 * member through the team's context; the PEs in both add what they got
 * into PE 0's sum through the first team's context. */
static void team_context(int me, int n) {
  shmem_team_config_t conf = {.num_contexts = 1};
  shmem_team_t t2, t3;
  shmem_ctx_t c2 = SHMEM_CTX_INVALID, c3 = SHMEM_CTX_INVALID;
  int n2 = (n + 1) / 2, n3 = (n + 2) / 3;
  CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, n2, &conf, SHMEM_TEAM_NUM_CONTEXTS, &t2) == 0, "split 2");
  CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 3, n3, &conf, SHMEM_TEAM_NUM_CONTEXTS, &t3) == 0, "split 3");
  if (shmem_team_create_ctx(t2, 0, &c2) != 0) CHECK(t2 == SHMEM_TEAM_INVALID && c2 == SHMEM_CTX_INVALID, "ctx on team 2");
  if (shmem_team_create_ctx(t3, 0, &c3) != 0) CHECK(t3 == SHMEM_TEAM_INVALID && c3 == SHMEM_CTX_INVALID, "ctx on team 3");
  if (c2 != SHMEM_CTX_INVALID) {
    int pe = shmem_team_my_pe(t2);
    shmem_ctx_int_put(c2, &val_2, &pe, 1, (pe + 1) % shmem_team_n_pes(t2));
  }
  if (c3 != SHMEM_CTX_INVALID) {
    int pe = shmem_team_my_pe(t3);
    shmem_ctx_int_put(c3, &val_3, &pe, 1, (pe + 1) % shmem_team_n_pes(t3));
  }
  shmem_ctx_quiet(c2);
  shmem_ctx_quiet(c3);
  shmem_team_sync(SHMEM_TEAM_WORLD);
  if (t2 != SHMEM_TEAM_INVALID && t3 != SHMEM_TEAM_INVALID) shmem_ctx_int_atomic_add(c2, &both_sum, val_2 + val_3, 0);
  shmem_ctx_quiet(c2);
  shmem_team_sync(SHMEM_TEAM_WORLD);
  if (me == 0) {
    int want = 0; /* PE i in both teams got its left neighbour's number in each */
    for (int i = 0; i < n; i += 6) want += (i / 2 + n2 - 1) % n2 + (i / 3 + n3 - 1) % n3;
    CHECK(both_sum == want, "team contexts: sum %d, want %d", both_sum, want);
  }
  shmem_ctx_destroy(c2);
  shmem_ctx_destroy(c3);
  if (t2 != SHMEM_TEAM_INVALID) shmem_team_destroy(t2);
  if (t3 != SHMEM_TEAM_INVALID) shmem_team_destroy(t3);
}

/* Private contexts in threads: each thread takes tasks from every PE's
 * counter in turn (its own first) with fetch-increments on its own
 * context, until every PE's tasks are taken. */
static void *worker(void *arg) {
  int me = shmem_my_pe(), n = shmem_n_pes();
  long *done = arg;
  shmem_ctx_t ctx;
  CHECK(shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) == 0, "ctx_create");
  for (int k = 0, pe = me; k < n; k++, pe = (pe + 1) % n)
    while (shmem_atomic_fetch_inc(ctx, &task_counter, pe) < NTASKS) ++*done;
  shmem_ctx_destroy(ctx);
  return NULL;
}

static void threaded_contexts(int n) {
  pthread_t th[THREADS];
  long done[THREADS] = {0};
  for (int i = 0; i < THREADS; i++) CHECK(pthread_create(&th[i], NULL, worker, &done[i]) == 0, "pthread_create");
  for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < THREADS; i++) done_here += done[i];
  for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++) psync[i] = SHMEM_SYNC_VALUE;
  shmem_barrier_all();
  shmem_long_sum_to_all(&done_all, &done_here, 1, 0, 0, n, pwrk, psync);
  CHECK(done_all == (long)NTASKS * n, "threads: %ld tasks done, want %ld", done_all, (long)NTASKS * n);
}

/* A library keeps one context per thread: private if it can have one,
 * else any new one, else the default; each thread puts its buffer to
 * every PE through it, at the slot of the calling PE. */
static _Thread_local shmem_ctx_t thread_ctx = SHMEM_CTX_INVALID;
static int *lib_src, *lib_dst;
enum { LIB_COUNT = 1 << 12 };

static void lib_register(void) {
  if (thread_ctx == SHMEM_CTX_INVALID && shmem_ctx_create(SHMEM_CTX_PRIVATE, &thread_ctx) != 0 &&
      shmem_ctx_create(0, &thread_ctx) != 0)
    thread_ctx = SHMEM_CTX_DEFAULT;
}

static void lib_unregister(void) {
  if (thread_ctx != SHMEM_CTX_DEFAULT) shmem_ctx_destroy(thread_ctx);
  thread_ctx = SHMEM_CTX_INVALID;
}

static void *lib_thread(void *arg) {
  int t = (int)(long)arg, me = shmem_my_pe(), n = shmem_n_pes();
  lib_register();
  CHECK(thread_ctx != SHMEM_CTX_INVALID, "thread context");
  for (int pe = t; pe < n; pe += THREADS) /* this thread's share of the PEs */
    shmem_ctx_putmem(thread_ctx, &lib_dst[me * LIB_COUNT], lib_src, LIB_COUNT * sizeof(int), pe);
  shmem_ctx_quiet(thread_ctx);
  lib_unregister();
  return NULL;
}

static void thread_local_contexts(int me, int n) {
  lib_src = shmem_malloc(LIB_COUNT * sizeof(int));
  lib_dst = shmem_calloc((size_t)n * LIB_COUNT, sizeof(int));
  CHECK(lib_src && lib_dst, "thread-local contexts: allocation");
  for (int j = 0; j < LIB_COUNT; j++) lib_src[j] = (me << 10) + j % 7;
  pthread_t th[THREADS];
  for (long i = 0; i < THREADS; i++) CHECK(pthread_create(&th[i], NULL, lib_thread, (void *)i) == 0, "pthread_create");
  for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
  shmem_barrier_all();
  for (int pe = 0; pe < n; pe++)
    for (int j = 0; j < LIB_COUNT; j++)
      CHECK(lib_dst[pe * LIB_COUNT + j] == (pe << 10) + j % 7, "thread-local contexts: PE %d's [%d] = %d", pe, j,
            lib_dst[pe * LIB_COUNT + j]);
  shmem_barrier_all();
  shmem_free(lib_dst);
  shmem_free(lib_src);
}

int main(void) {
  int provided;
  CHECK(shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided) == 0 && provided == SHMEM_THREAD_MULTIPLE,
        "init_thread: provided %d", provided);
  int me = shmem_my_pe(), n = shmem_n_pes();
  split_strided(me, n);
  translate_pe(me, n);
  split_2d(me, n);
  team_context(me, n);
  threaded_contexts(n);
  thread_local_contexts(me, n);
  PASS("spec_team");
  shmem_finalize();
  return 0;
}
