/* amo.c: atomics of each operation and several types on PE 0's words. */
#include "check.h"

int main(void) {
  shmem_init();
  int me = shmem_my_pe(), n = shmem_n_pes();
  long *cnt = shmem_calloc(1, sizeof(long));
  unsigned int *bits = shmem_calloc(1, sizeof(unsigned int));
  uint64_t *xorw = shmem_calloc(1, sizeof(uint64_t));
  int *cs = shmem_calloc(1, sizeof(int));
  double *dv = shmem_calloc(1, sizeof(double));
  long long *ll = shmem_calloc(1, sizeof(long long));
  size_t *sz = shmem_calloc(1, sizeof(size_t));

  long before = shmem_long_atomic_fetch_inc(cnt, 0);
  CHECK(before >= 0 && before <= 12L * n, "fetch_inc %ld", before);
  shmem_atomic_add(cnt, 10L, 0);
  shmem_long_atomic_inc(cnt, 0);
  shmem_uint_atomic_or(bits, 1u << me, 0);
  shmem_uint64_atomic_xor(xorw, (uint64_t)1 << me, 0);
  shmem_atomic_fetch_add(ll, 3LL, 0);
  shmem_size_atomic_add(sz, 2, 0);
  /* one PE wins the compare-and-swap */
  int old = shmem_int_atomic_compare_swap(cs, 0, me + 1, 0);
  shmem_barrier_all();
  if (me == 0) {
    CHECK(*cnt == 12L * n, "cnt %ld", *cnt);
    CHECK(*bits == (1u << n) - 1, "or %x", *bits);
    CHECK(*xorw == ((uint64_t)1 << n) - 1, "xor");
    CHECK(*ll == 3LL * n && *sz == 2u * n, "longlong/size add");
    CHECK(*cs >= 1 && *cs <= n, "cswap %d", *cs);
  }
  (void)old;
  shmem_barrier_all();
  /* fetch, set, swap, and the float types */
  if (me == n - 1) {
    shmem_double_atomic_set(dv, 2.5, 0);
    CHECK(shmem_atomic_fetch(dv, 0) == 2.5, "double fetch");
    double was = shmem_double_atomic_swap(dv, 4.0, 0);
    CHECK(was == 2.5, "double swap %f", was);
    long f = -1;
    shmem_long_atomic_fetch_nbi(&f, cnt, 0);
    shmem_quiet();
    CHECK(f == 12L * n, "fetch_nbi %ld", f);
    unsigned int prev = shmem_uint_atomic_fetch_and(bits, 1u, 0);
    CHECK(prev == (1u << n) - 1, "fetch_and %x", prev);
    CHECK(shmem_uint_atomic_fetch(bits, 0) == 1u, "and");
    CHECK(shmem_long_fadd(cnt, 1, 0) == 12L * n, "deprecated fadd");
  }
  shmem_barrier_all();
  /* The non-fetching atomics are posted over the network: a fence orders
   * them before a later write to the same PE, and quiet completes them. */
  long *sum = shmem_calloc(1, sizeof(long)), *flag = shmem_calloc(1, sizeof(long));
  unsigned int *mask = shmem_calloc(1, sizeof(unsigned int));
  if (me == n - 1) {
    for (int i = 0; i < 100; i++) shmem_long_atomic_add(sum, i, 0);
    shmem_uint_atomic_xor(mask, 0xf0u, 0);
    shmem_uint_atomic_and(mask, 0x30u, 0);
    shmem_uint_atomic_or(mask, 0x01u, 0);
    shmem_fence();
    shmem_long_atomic_set(flag, 1, 0);
    for (int i = 0; i < 100; i++) shmem_long_atomic_inc(sum, 0);
    shmem_quiet();
    CHECK(shmem_long_atomic_fetch(sum, 0) == 4950 + 100, "posted adds after quiet %ld", shmem_long_atomic_fetch(sum, 0));
  }
  if (me == 0) {
    shmem_long_wait_until(flag, SHMEM_CMP_EQ, 1);
    long seen = shmem_long_atomic_fetch(sum, 0);
    CHECK(seen >= 4950 && seen <= 4950 + 100, "adds fenced before the flag: %ld", seen);
    CHECK(shmem_uint_atomic_fetch(mask, 0) == 0x31u, "posted xor, and, or: %x", shmem_uint_atomic_fetch(mask, 0));
  }
  shmem_barrier_all();
  /* Fetching atomics, non-blocking: several outstanding before one quiet
   * (over the network they overlap), each old value in its own place. */
  long *ctr = shmem_calloc(1, sizeof(long));
  shmem_barrier_all();
  long olds[8];
  int cs_old = -1;
  double dold = -1;
  for (int i = 0; i < 8; i++) shmem_long_atomic_fetch_add_nbi(&olds[i], ctr, 1, 0);
  shmem_int_atomic_compare_swap_nbi(&cs_old, cs, -7, -8, 0); /* never matches: returns the value */
  shmem_double_atomic_fetch_nbi(&dold, dv, 0);
  shmem_quiet();
  for (int i = 0; i < 8; i++) CHECK(olds[i] >= 0 && olds[i] < 8L * n, "fetch_add_nbi old %ld", olds[i]);
  for (int i = 1; i < 8; i++) CHECK(olds[i] != olds[i - 1], "two fetch_add_nbi saw the same old value %ld", olds[i]);
  CHECK(cs_old >= 1 && cs_old <= n, "compare_swap_nbi old %d", cs_old);
  CHECK(dold == 4.0, "double fetch_nbi %f", dold);
  shmem_barrier_all();
  if (me == 0) CHECK(*ctr == 8L * n, "fetch_add_nbi total %ld", *ctr);
  shmem_free(ctr);
  shmem_free(mask);
  shmem_free(flag);
  shmem_free(sum);
  PASS("amo");
  shmem_finalize();
  return 0;
}
