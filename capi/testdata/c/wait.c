/* wait.c: point-to-point synchronization: every PE signals PE 0, which
 * waits in each form; then a put_signal ring. */
#include "check.h"

int main(void) {
  shmem_init();
  int me = shmem_my_pe(), n = shmem_n_pes();
  int *flags = shmem_calloc(n, sizeof(int));
  long *vals = shmem_calloc(n, sizeof(long));
  uint64_t *sig = shmem_calloc(1, sizeof(uint64_t));
  long *data = shmem_calloc(1, sizeof(long));
  shmem_int_p(&flags[me], 1, 0);
  shmem_long_p(&vals[me], me + 1, 0);
  if (me == 0) {
    shmem_int_wait_until_all(flags, n, NULL, SHMEM_CMP_EQ, 1);
    CHECK(shmem_int_test_all(flags, n, NULL, SHMEM_CMP_EQ, 1), "test_all");
    size_t any = shmem_int_wait_until_any(flags, n, NULL, SHMEM_CMP_EQ, 1);
    CHECK(any < (size_t)n, "any %zu", any);
    /* Every flag holds: a series of _any calls must return each index
     * (the spec's "must eventually return i"), also with calls on another
     * array between them. */
    int seen[64] = {0}, nseen = 0;
    for (int c = 0; c < 100 * n && nseen < n; c++) {
      size_t i = c % 2 ? shmem_int_test_any(flags, n, NULL, SHMEM_CMP_EQ, 1)
                       : shmem_int_wait_until_any(flags, n, NULL, SHMEM_CMP_EQ, 1);
      CHECK(i < (size_t)n, "any call %d: %zu", c, i);
      if (!seen[i]++) nseen++;
      CHECK(shmem_long_test_any(vals, 1, NULL, SHMEM_CMP_EQ, 1L) == 0, "test_any on vals");
    }
    CHECK(nseen == n, "the _any forms returned %d of %d indices that hold", nseen, n);
    size_t idx[64];
    size_t some = shmem_int_wait_until_some(flags, n, idx, NULL, SHMEM_CMP_NE, 0);
    CHECK(some == (size_t)n, "some %zu", some);
    long want[64];
    for (int k = 0; k < n; k++) want[k] = k + 1;
    shmem_long_wait_until_all_vector(vals, n, NULL, SHMEM_CMP_EQ, want);
    int status[64] = {0};
    status[0] = 1; /* excluded */
    size_t a2 = shmem_long_test_any_vector(vals, n, status, SHMEM_CMP_EQ, want);
    CHECK(n == 1 ? a2 == SIZE_MAX : a2 >= 1, "test_any_vector %zu", a2);
    shmem_wait_until(&vals[n - 1], SHMEM_CMP_GE, (long)n); /* generic */
    CHECK(shmem_test(&vals[0], SHMEM_CMP_EQ, 1L), "generic test");
    CHECK(!shmem_int_test(&flags[0], SHMEM_CMP_EQ, 2), "test false");
    size_t got2 = shmem_long_test_some(vals, n, idx, NULL, SHMEM_CMP_GT, 1L);
    CHECK(got2 == (size_t)(n - 1) && (n == 1 || idx[0] == 1), "test_some %zu", got2);
    size_t some2 = shmem_long_wait_until_some_vector(vals, n, idx, NULL, SHMEM_CMP_EQ, want);
    CHECK(some2 == (size_t)n, "wait_until_some_vector %zu", some2);
  }
  shmem_barrier_all();
  /* a ring of put_signal: each PE waits for the previous one */
  long v = 1000 + me;
  int next = (me + 1) % n;
  if (me == 0) shmem_long_put_signal(data, &v, 1, sig, 1, SHMEM_SIGNAL_SET, next);
  uint64_t got = shmem_signal_wait_until(sig, SHMEM_CMP_EQ, 1);
  CHECK(got == 1, "signal %llu", (unsigned long long)got);
  CHECK(*data == 1000 + (me + n - 1) % n, "data %ld", *data);
  if (me != 0) shmem_putmem_signal(data, &v, sizeof v, sig, 1, SHMEM_SIGNAL_ADD, next);
  shmem_barrier_all();
  /* the non-blocking form, then a 16-bit wait (deprecated short type) */
  short *h = shmem_calloc(1, sizeof(short));
  shmem_long_put_signal_nbi(data, &v, 1, sig, 5, SHMEM_SIGNAL_SET, next);
  shmem_quiet();
  shmem_short_p(h, 3, next);
  shmem_signal_wait_until(sig, SHMEM_CMP_EQ, 5);
  shmem_short_wait_until(h, SHMEM_CMP_EQ, 3);
  shmem_barrier_all();
  CHECK(shmem_signal_fetch(sig) >= 1, "signal_fetch");
  PASS("wait");
  shmem_finalize();
  return 0;
}
