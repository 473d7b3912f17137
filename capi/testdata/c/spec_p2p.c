/* spec_p2p.c: the scenarios of the OpenSHMEM 1.5 specification's
 * point-to-point synchronization and lock examples (shmem_wait_until_all,
 * shmem_wait_until_any_vector, shmem_test_some, shmem_wait_until_some
 * until it returns 0, shmem_test_any,
 * shmem_test as a user's wait-any, shmem_set_lock around a shared
 * counter), written for this test: the same data, calls and expected
 * values, each checked here. Every PE prints "spec_p2p ok" after all. */
#include <stdint.h>
#include "check.h"

static long lock_word;
static int lock_count;

/* shmem_wait_until_all: every PE sets its flag on every PE, then waits
 * for all flags (status NULL: every one counts). */
static void wait_until_all(int me, int n) {
  int *flags = shmem_calloc(n, sizeof(int));
  CHECK(flags, "wait_until_all: allocation");
  shmem_barrier_all();
  for (int pe = 0; pe < n; pe++) shmem_atomic_set(&flags[me], 1, pe);
  shmem_wait_until_all(flags, n, NULL, SHMEM_CMP_EQ, 1);
  for (int i = 0; i < n; i++) CHECK(flags[i] == 1, "wait_until_all: flag %d is %d", i, flags[i]);
  shmem_barrier_all();
  shmem_free(flags);
}

/* shmem_wait_until_any_vector: odd PEs send 2, even PEs 1; each waits
 * for one at a time against the value expected from that PE, excluding
 * the ones seen, and sums them. */
static void wait_until_any_vector(int me, int n) {
  int *ivars = shmem_calloc(n, sizeof(int));
  int *status = calloc(n, sizeof(int)), *want = malloc(n * sizeof(int));
  CHECK(ivars && status && want, "wait_until_any_vector: allocation");
  shmem_barrier_all();
  for (int pe = 0; pe < n; pe++) {
    shmem_atomic_set(&ivars[me], me % 2 + 1, pe);
    want[pe] = pe % 2 + 1;
  }
  int sum = 0;
  for (int k = 0; k < n; k++) {
    size_t i = shmem_wait_until_any_vector(ivars, n, status, SHMEM_CMP_EQ, want);
    CHECK(i < (size_t)n && !status[i], "wait_until_any_vector: index %zu", i);
    status[i] = 1;
    sum += ivars[i];
  }
  CHECK(sum == n + n / 2, "wait_until_any_vector: sum %d, want %d", sum, n + n / 2);
  shmem_barrier_all();
  free(want);
  free(status);
  shmem_free(ivars);
}

/* shmem_test_some: every PE puts 100 ints to every PE (nbi), fences, sets
 * its flag there; each PE sums the data of the PEs whose flags it finds
 * set, some at a time, until it has all: 0 + 1 + ... + (100n - 1). */
static void test_some(int me, int n) {
  enum { N = 100 };
  int mine[N];
  int *all = shmem_malloc(N * n * sizeof(int)), *flags = shmem_calloc(n, sizeof(int));
  size_t *idx = calloc(n, sizeof(size_t));
  int *status = calloc(n, sizeof(int));
  CHECK(all && flags && idx && status, "test_some: allocation");
  shmem_barrier_all();
  for (int i = 0; i < N; i++) mine[i] = me * N + i;
  for (int pe = 0; pe < n; pe++) shmem_put_nbi(&all[me * N], mine, N, pe);
  shmem_fence();
  for (int pe = 0; pe < n; pe++) shmem_atomic_set(&flags[me], 1, pe);
  long sum = 0;
  int done = 0;
  while (done < n) {
    size_t got = shmem_test_some(flags, n, idx, status, SHMEM_CMP_NE, 0);
    for (size_t k = 0; k < got; k++) {
      for (int j = 0; j < N; j++) sum += all[idx[k] * N + j];
      status[idx[k]] = 1;
    }
    done += (int)got;
  }
  long m = (long)N * n - 1;
  CHECK(sum == m * (m + 1) / 2, "test_some: sum %ld, want %ld", sum, m * (m + 1) / 2);
  shmem_barrier_all();
  free(status);
  free(idx);
  shmem_free(flags);
  shmem_free(all);
}

/* shmem_wait_until_some, all-to-all sum: as test_some, but waiting, until
 * wait_until_some returns 0 because status excludes every flag. */
static void wait_until_some(int me, int n) {
  enum { N = 100 };
  int mine[N];
  int *all = shmem_malloc(N * n * sizeof(int)), *flags = shmem_calloc(n, sizeof(int));
  size_t *idx = malloc(n * sizeof(size_t));
  int *status = calloc(n, sizeof(int));
  CHECK(all && flags && idx && status, "wait_until_some: allocation");
  shmem_barrier_all();
  for (int i = 0; i < N; i++) mine[i] = me * N + i;
  for (int pe = 0; pe < n; pe++) shmem_put_nbi(&all[me * N], mine, N, pe);
  shmem_fence();
  for (int pe = 0; pe < n; pe++) shmem_atomic_set(&flags[me], 1, pe);
  long sum = 0;
  size_t got;
  while ((got = shmem_wait_until_some(flags, n, idx, status, SHMEM_CMP_NE, 0)) != 0) {
    for (size_t k = 0; k < got; k++) {
      for (int j = 0; j < N; j++) sum += all[idx[k] * N + j];
      status[idx[k]] = 1;
    }
  }
  long m = (long)N * n - 1;
  CHECK(sum == m * (m + 1) / 2, "wait_until_some: sum %ld, want %ld", sum, m * (m + 1) / 2);
  shmem_barrier_all();
  free(status);
  free(idx);
  shmem_free(flags);
  shmem_free(all);
}

/* shmem_test_any: as wait_until_all, one flag at a time by polling. */
static void test_any(int me, int n) {
  int *flags = shmem_calloc(n, sizeof(int));
  int *status = calloc(n, sizeof(int));
  CHECK(flags && status, "test_any: allocation");
  shmem_barrier_all();
  for (int pe = 0; pe < n; pe++) shmem_atomic_set(&flags[me], 1, pe);
  int done = 0;
  while (done < n) {
    size_t i = shmem_test_any(flags, n, status, SHMEM_CMP_EQ, 1);
    if (i != SIZE_MAX) {
      CHECK(i < (size_t)n && !status[i], "test_any: index %zu", i);
      status[i] = 1;
      done++;
    }
  }
  shmem_barrier_all();
  free(status);
  shmem_free(flags);
}

/* shmem_test: PE 0 polls one word after another until it finds one that
 * another PE set to its number. */
static int user_wait_any(long *ivar, int count, int cmp, long value) {
  int i = 0;
  while (!shmem_test(&ivar[i], cmp, value)) i = (i + 1) % count;
  return i;
}

static void test(int me, int n) {
  long *words = shmem_calloc(n, sizeof(long));
  CHECK(words, "test: allocation");
  shmem_barrier_all();
  if (me == 0) {
    int who = user_wait_any(words, n, SHMEM_CMP_NE, 0);
    printf("PE %d observed first update from PE %d\n", me, who);
    CHECK(who > 0 && who < n && words[who] == who, "test: PE %d wrote %ld", who, words[who]);
  } else {
    shmem_atomic_set(&words[me], (long)me, 0);
  }
  shmem_barrier_all();
  shmem_free(words);
}

/* shmem_set_lock: each PE, holding the lock, reads PE 0's count, prints
 * it and writes it back plus one; the count ends at n. */
static void lock(int me, int n) {
  shmem_set_lock(&lock_word);
  int val = shmem_g(&lock_count, 0);
  printf("%d: count is %d\n", me, val);
  shmem_p(&lock_count, val + 1, 0);
  shmem_clear_lock(&lock_word);
  shmem_barrier_all();
  if (me == 0) CHECK(lock_count == n, "lock: count %d, want %d", lock_count, n);
}

int main(void) {
  shmem_init();
  int me = shmem_my_pe(), n = shmem_n_pes();
  CHECK(n >= 2, "the examples need 2 PEs at least");
  wait_until_all(me, n);
  wait_until_any_vector(me, n);
  test_some(me, n);
  wait_until_some(me, n);
  test_any(me, n);
  test(me, n);
  lock(me, n);
  PASS("spec_p2p");
  shmem_finalize();
  return 0;
}
