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
