/* wait_all.c: every typed point-to-point synchronization routine of the
 * OpenSHMEM 1.5 spec (wait_until, _all, _any, _some, their _vector forms,
 * test and its forms), for every type it lists, plus the deprecated
 * shmem_T_wait and the 16-bit wait_until and test. For each type the left
 * neighbour writes 1, 2, 3, 4 into four words here while this PE waits;
 * then every form is asked about them, with results checked. Each PE
 * prints "wait_all ok". */
#include <stddef.h>
#include <stdint.h>
#include "check.h"

#define TYPES(X)                                                                                       \
  X(int, int) X(long, long) X(longlong, long long) X(uint, unsigned int) X(ulong, unsigned long)      \
  X(ulonglong, unsigned long long) X(int32, int32_t) X(int64, int64_t) X(uint32, uint32_t)            \
  X(uint64, uint64_t) X(size, size_t) X(ptrdiff, ptrdiff_t)

#define EQ(got, want, what) CHECK((got) == (want), "%s: got %lld, want %lld", what, (long long)(got), (long long)(want))

/* The left neighbour's part: 1, 2, 3, 4 into four words of PE next. */
#define WRITE(T, C)                                                                                   \
  static void write_##T(C *w, int next) {                                                             \
    for (int i = 0; i < 4; i++) shmem_##T##_p(&w[i], (C)(i + 1), next);                               \
    shmem_quiet();                                                                                     \
  }
TYPES(WRITE)

#define ASK(T, C)                                                                                     \
  static void ask_##T(C *w) {                                                                         \
    const char *t = #T;                                                                               \
    size_t idx[4];                                                                                    \
    C want[4] = {1, 2, 3, 4}, other[4] = {1, 2, 3, 5};                                                \
    shmem_##T##_wait_until(&w[3], SHMEM_CMP_EQ, 4);                                                   \
    shmem_##T##_wait_until_all(w, 4, NULL, SHMEM_CMP_GT, 0);                                          \
    for (int i = 0; i < 4; i++) EQ(w[i], (C)(i + 1), t);                                              \
    int skip[4] = {1, 1, 0, 1};                                                                       \
    EQ(shmem_##T##_wait_until_any(w, 4, skip, SHMEM_CMP_GE, 1), 2, t);                                \
    int some[4] = {0, 1, 0, 1};                                                                       \
    EQ(shmem_##T##_wait_until_some(w, 4, idx, some, SHMEM_CMP_GE, 1), 2, t);                          \
    EQ(idx[0] + idx[1], 2, t); /* 0 and 2 */                                                          \
    shmem_##T##_wait_until_all_vector(w, 4, NULL, SHMEM_CMP_EQ, want);                                \
    int first[4] = {1, 0, 1, 1};                                                                      \
    EQ(shmem_##T##_wait_until_any_vector(w, 4, first, SHMEM_CMP_EQ, want), 1, t);                     \
    EQ(shmem_##T##_wait_until_some_vector(w, 4, idx, NULL, SHMEM_CMP_NE, other), 1, t);               \
    EQ(idx[0], 3, t);                                                                                 \
    EQ(shmem_##T##_test(&w[0], SHMEM_CMP_EQ, 1), 1, t);                                               \
    EQ(shmem_##T##_test(&w[0], SHMEM_CMP_EQ, 2), 0, t);                                               \
    EQ(shmem_##T##_test_all(w, 4, NULL, SHMEM_CMP_GT, 0), 1, t);                                      \
    EQ(shmem_##T##_test_all(w, 4, NULL, SHMEM_CMP_GT, 1), 0, t);                                      \
    EQ(shmem_##T##_test_any(w, 4, NULL, SHMEM_CMP_EQ, 4), 3, t);                                      \
    EQ(shmem_##T##_test_any(w, 4, NULL, SHMEM_CMP_EQ, 9), SIZE_MAX, t);                               \
    EQ(shmem_##T##_test_some(w, 4, idx, NULL, SHMEM_CMP_LT, 3), 2, t);                                \
    EQ(idx[0] + idx[1], 1, t); /* 0 and 1 */                                                          \
    EQ(shmem_##T##_test_all_vector(w, 4, NULL, SHMEM_CMP_EQ, want), 1, t);                            \
    EQ(shmem_##T##_test_all_vector(w, 4, NULL, SHMEM_CMP_EQ, other), 0, t);                           \
    EQ(shmem_##T##_test_any_vector(w, 4, first, SHMEM_CMP_EQ, want), 1, t);                           \
    EQ(shmem_##T##_test_any_vector(w, 4, NULL, SHMEM_CMP_GT, want), SIZE_MAX, t);                     \
    EQ(shmem_##T##_test_some_vector(w, 4, idx, NULL, SHMEM_CMP_LE, other), 4, t);                     \
  }
TYPES(ASK)

int main(void) {
  shmem_init();
  int me = shmem_my_pe(), n = shmem_n_pes(), next = (me + 1) % n;
#define ALLOC(T, C) C *w_##T = shmem_calloc(4, sizeof(C));
  TYPES(ALLOC)
  short *s = shmem_calloc(2, sizeof(short));
  unsigned short *us = shmem_calloc(2, sizeof(unsigned short));
  long *l = shmem_calloc(3, sizeof(long));
  int *i4 = shmem_calloc(1, sizeof(int));
  long long *ll = shmem_calloc(1, sizeof(long long));
  shmem_barrier_all();
  /* No barrier between the writes and the waits: the waits wait. */
#define RUN(T, C) write_##T(w_##T, next);
  TYPES(RUN)
  shmem_short_p(&s[0], 6, next);
  shmem_ushort_p(&us[0], 7, next);
  shmem_short_p(&s[1], -1, next);
  shmem_long_p(&l[0], 8, next);
  shmem_int_p(i4, 9, next);
  shmem_longlong_p(ll, 10, next);
  shmem_quiet();
#define RUNASK(T, C) ask_##T(w_##T);
  TYPES(RUNASK)
  /* Deprecated forms still in the spec. */
  shmem_short_wait_until(&s[0], SHMEM_CMP_EQ, 6);
  shmem_ushort_wait_until(&us[0], SHMEM_CMP_EQ, 7);
  shmem_short_wait(&s[1], 0);
  shmem_long_wait(&l[0], 0);
  shmem_int_wait(i4, 0);
  shmem_longlong_wait(ll, 0);
  EQ(shmem_short_test(&s[1], SHMEM_CMP_EQ, -1), 1, "short test");
  EQ(shmem_ushort_test(&us[0], SHMEM_CMP_NE, 7), 0, "ushort test");
  EQ(s[0] + us[0] + l[0] + *i4 + *ll, 40, "deprecated waits");
  shmem_barrier_all();
  PASS("wait_all");
  shmem_finalize();
  return 0;
}
