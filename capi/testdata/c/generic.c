/* generic.c: the C11 generic names pick the routine of each argument
 * type. Compiled with -Werror: a wrong pick passes a pointer of another
 * type and fails the build. Run on any number of PEs, it prints
 * "generic ok". */
#include "check.h"

#define RMA_TYPES(X)                                                                                  \
  X(f, float) X(d, double) X(ld, long double) X(c, char) X(sc, signed char) X(s, short) X(i, int)    \
  X(l, long) X(ll, long long) X(uc, unsigned char) X(us, unsigned short) X(ui, unsigned int)         \
  X(ul, unsigned long) X(ull, unsigned long long)

#define AMO_TYPES(X) X(i, int) X(l, long) X(ll, long long) X(ui, unsigned int) X(ul, unsigned long) X(ull, unsigned long long)

#define RMA(name, T)                                                     \
  static void rma_##name(T *sym, int pe) {                               \
    T local[2] = {(T)1, (T)2};                                           \
    shmem_put(sym, local, 2, pe);                                        \
    shmem_put(SHMEM_CTX_DEFAULT, sym, local, 2, pe);                     \
    shmem_put_nbi(sym, local, 1, pe);                                    \
    shmem_quiet();                                                       \
    shmem_get(local, sym, 2, pe);                                        \
    shmem_p(sym, local[0], pe);                                          \
    T v = shmem_g(sym, pe);                                              \
    shmem_iput(sym, local, 1, 1, 2, pe);                                 \
    shmem_iget(local, sym, 1, 1, 2, pe);                                 \
    CHECK(v == (T)1, #name " g");                                        \
  }
RMA_TYPES(RMA)

#define AMO(name, T)                                                     \
  static void amo_##name(T *sym, int pe) {                               \
    shmem_atomic_set(sym, (T)5, pe);                                     \
    T old = shmem_atomic_fetch_add(sym, (T)1, pe);                       \
    shmem_atomic_inc(SHMEM_CTX_DEFAULT, sym, pe);                        \
    T cur = shmem_atomic_compare_swap(sym, (T)7, (T)9, pe);              \
    CHECK(old == (T)5 && cur == (T)7, #name " atomics");                 \
    CHECK(shmem_atomic_fetch(sym, pe) == (T)9, #name " fetch");          \
  }
AMO_TYPES(AMO)

/* The bitwise AMOs' table has int32_t and int64_t, which are int and long:
 * their generic names take those through the fixed-width routines. */
#define BITWISE_TYPES(X) X(i32, int32_t) X(i64, int64_t) X(ui, unsigned int) X(u64, uint64_t)

#define BITWISE(name, T)                                                 \
  static void bitwise_##name(T *sym, int pe) {                           \
    shmem_atomic_set(sym, (T)12, pe);                                    \
    shmem_atomic_and(sym, (T)10, pe);                                    \
    T old = shmem_atomic_fetch_or(SHMEM_CTX_DEFAULT, sym, (T)1, pe);     \
    shmem_atomic_xor(sym, (T)3, pe);                                     \
    CHECK(old == (T)8 && shmem_atomic_fetch_xor(sym, (T)0, pe) == (T)10, \
          #name " bitwise");                                             \
  }
BITWISE_TYPES(BITWISE)

/* The bitwise reductions' table has int8_t to int64_t. */
#define REDUCE_TYPES(X) X(i8, int8_t) X(i16, int16_t) X(i32, int32_t) X(i64, int64_t)

#define REDUCE(name, T)                                                                  \
  static void reduce_##name(T *dst, T *src, int me, int n) {                             \
    *src = (T)(1 << (me % 7));                                                           \
    shmem_barrier_all();                                                                 \
    CHECK(shmem_or_reduce(SHMEM_TEAM_WORLD, dst, src, 1) == 0, #name " or_reduce");      \
    T want = 0;                                                                          \
    for (int i = 0; i < n; i++) want |= (T)(1 << (i % 7));                               \
    CHECK(*dst == want, #name " or_reduce value");                                       \
    CHECK(shmem_and_reduce(SHMEM_TEAM_WORLD, dst, src, 1) == 0, #name " and_reduce");    \
    CHECK(*dst == (n == 1 ? (T)1 : (T)0), #name " and_reduce value");                     \
    CHECK(shmem_xor_reduce(SHMEM_TEAM_WORLD, dst, src, 1) == 0, #name " xor_reduce");    \
  }
REDUCE_TYPES(REDUCE)

int main(void) {
  shmem_init();
  int me = shmem_my_pe(), n = shmem_n_pes();
  void *buf = shmem_calloc(64, 1);
  int pe = (me + 1) % n;
#define CALL_RMA(name, T) rma_##name((T *)buf, pe);
  RMA_TYPES(CALL_RMA)
  shmem_barrier_all(); /* my slot of buf is now mine alone: atomics on my own copy */
#define CALL_AMO(name, T) amo_##name((T *)buf, me);
  AMO_TYPES(CALL_AMO)
#define CALL_BITWISE(name, T) bitwise_##name((T *)buf, me);
  BITWISE_TYPES(CALL_BITWISE)
  int64_t *rsrc = shmem_malloc(sizeof(int64_t)), *rdst = shmem_malloc(sizeof(int64_t));
#define CALL_REDUCE(name, T) reduce_##name((T *)rdst, (T *)rsrc, me, n);
  REDUCE_TYPES(CALL_REDUCE)
  long *w = shmem_calloc(n, sizeof(long));
  shmem_barrier_all();
  shmem_p(&w[me], 1L, 0);
  if (me == 0) shmem_wait_until_all(w, n, NULL, SHMEM_CMP_EQ, 1L);
  long *r = shmem_malloc(sizeof(long));
  CHECK(shmem_sum_reduce(SHMEM_TEAM_WORLD, r, &w[0], 1) == 0, "reduce");
  shmem_barrier_all();
  PASS("generic");
  shmem_finalize();
  return 0;
}
