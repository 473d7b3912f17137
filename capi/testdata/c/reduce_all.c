/* reduce_all.c: every typed reduction of the OpenSHMEM 1.5 spec, the team
 * routines (shmem_T_OP_reduce) and the deprecated active-set ones
 * (shmem_T_OP_to_all with pWrk and pSync), for every type the spec gives
 * each operation, over all PEs (at most 4, so that the bitwise values fit
 * 8 bits), with the results checked. Each PE prints "reduce_all ok". */
#include <complex.h>
#include <stddef.h>
#include <stdint.h>
#include "check.h"

/* What PE me contributes at index i, and what the reduction over n PEs
 * must give there. */
#define SRC_sum(C, me, i) ((C)((me) + 1 + (i)))
#define WANT_sum(C, n, i) ((C)((n) * ((n) + 1) / 2 + (n) * (i)))
#define SRC_prod(C, me, i) ((C)((me) % 2 + 1))
#define WANT_prod(C, n, i) ((C)(1 << ((n) / 2)))
#define SRC_max(C, me, i) ((C)((me) + (i)))
#define WANT_max(C, n, i) ((C)((n) - 1 + (i)))
#define SRC_min(C, me, i) ((C)((me) + (i)))
#define WANT_min(C, n, i) ((C)(i))
#define SRC_and(C, me, i) ((C)(0x0F | (1 << ((me) + 4))))
#define WANT_and(C, n, i) ((C)0x0F)
#define SRC_or(C, me, i) ((C)(0x0F | (1 << ((me) + 4))))
#define WANT_or(C, n, i) ((C)(0x0F | (((1 << (n)) - 1) << 4)))
#define SRC_xor(C, me, i) ((C)(1 << (me)))
#define WANT_xor(C, n, i) ((C)((1 << (n)) - 1))

/* The spec's types per operation of the team reductions. */
#define ORDERED(X, OP)                                                                                       \
  X(OP, char, char) X(OP, schar, signed char) X(OP, short, short) X(OP, int, int) X(OP, long, long)         \
  X(OP, longlong, long long) X(OP, ptrdiff, ptrdiff_t) X(OP, uchar, unsigned char)                          \
  X(OP, ushort, unsigned short) X(OP, uint, unsigned int) X(OP, ulong, unsigned long)                       \
  X(OP, ulonglong, unsigned long long) X(OP, int8, int8_t) X(OP, int16, int16_t) X(OP, int32, int32_t)      \
  X(OP, int64, int64_t) X(OP, uint8, uint8_t) X(OP, uint16, uint16_t) X(OP, uint32, uint32_t)               \
  X(OP, uint64, uint64_t) X(OP, size, size_t) X(OP, float, float) X(OP, double, double)                     \
  X(OP, longdouble, long double)
#define ARITH(X, OP) ORDERED(X, OP) X(OP, complexf, float _Complex) X(OP, complexd, double _Complex)
#define BITWISE(X, OP)                                                                                       \
  X(OP, uchar, unsigned char) X(OP, ushort, unsigned short) X(OP, uint, unsigned int)                       \
  X(OP, ulong, unsigned long) X(OP, ulonglong, unsigned long long) X(OP, int8, int8_t)                      \
  X(OP, int16, int16_t) X(OP, int32, int32_t) X(OP, int64, int64_t) X(OP, uint8, uint8_t)                   \
  X(OP, uint16, uint16_t) X(OP, uint32, uint32_t) X(OP, uint64, uint64_t) X(OP, size, size_t)

/* ... and of the deprecated active-set ones. */
#define TO_ALL_ORDERED(X, OP)                                                                                \
  X(OP, short, short) X(OP, int, int) X(OP, long, long) X(OP, longlong, long long) X(OP, float, float)      \
  X(OP, double, double) X(OP, longdouble, long double)
#define TO_ALL_ARITH(X, OP) TO_ALL_ORDERED(X, OP) X(OP, complexf, float _Complex) X(OP, complexd, double _Complex)
#define TO_ALL_BITWISE(X, OP) X(OP, short, short) X(OP, int, int) X(OP, long, long) X(OP, longlong, long long)

/* The symmetric work area: source at 0, dest at 64, pWrk at 128 (3
 * elements of at most 16 bytes each), and pSync. */
static char *buf;
static long *psync;
static int me, n;

#define REDUCE_TEST(OP, T, C)                                                                       \
  static void reduce_##T##_##OP(void) {                                                             \
    C *src = (C *)buf, *dst = (C *)(buf + 64);                                                      \
    for (int i = 0; i < 3; i++) {                                                                   \
      src[i] = SRC_##OP(C, me, i);                                                                  \
      dst[i] = (C)0;                                                                                \
    }                                                                                               \
    shmem_barrier_all();                                                                            \
    CHECK(shmem_##T##_##OP##_reduce(SHMEM_TEAM_WORLD, dst, src, 3) == 0, "shmem_" #T "_" #OP "_reduce failed"); \
    for (int i = 0; i < 3; i++) CHECK(dst[i] == WANT_##OP(C, n, i), "shmem_" #T "_" #OP "_reduce: [%d] wrong", i); \
    shmem_barrier_all();                                                                            \
  }
ARITH(REDUCE_TEST, sum)
ARITH(REDUCE_TEST, prod)
ORDERED(REDUCE_TEST, max)
ORDERED(REDUCE_TEST, min)
BITWISE(REDUCE_TEST, and)
BITWISE(REDUCE_TEST, or)
BITWISE(REDUCE_TEST, xor)

#define TO_ALL_TEST(OP, T, C)                                                                       \
  static void to_all_##T##_##OP(void) {                                                             \
    C *src = (C *)buf, *dst = (C *)(buf + 64), *pwrk = (C *)(buf + 128);                            \
    for (int i = 0; i < 3; i++) {                                                                   \
      src[i] = SRC_##OP(C, me, i);                                                                  \
      dst[i] = (C)0;                                                                                \
    }                                                                                               \
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++) psync[i] = SHMEM_SYNC_VALUE;                   \
    shmem_barrier_all();                                                                            \
    shmem_##T##_##OP##_to_all(dst, src, 3, 0, 0, n, pwrk, psync);                                   \
    for (int i = 0; i < 3; i++) CHECK(dst[i] == WANT_##OP(C, n, i), "shmem_" #T "_" #OP "_to_all: [%d] wrong", i); \
    shmem_barrier_all();                                                                            \
  }
TO_ALL_ARITH(TO_ALL_TEST, sum)
TO_ALL_ARITH(TO_ALL_TEST, prod)
TO_ALL_ORDERED(TO_ALL_TEST, max)
TO_ALL_ORDERED(TO_ALL_TEST, min)
TO_ALL_BITWISE(TO_ALL_TEST, and)
TO_ALL_BITWISE(TO_ALL_TEST, or)
TO_ALL_BITWISE(TO_ALL_TEST, xor)

int main(void) {
  shmem_init();
  me = shmem_my_pe();
  n = shmem_n_pes();
  CHECK(n <= 4, "reduce_all's bitwise values need at most 4 PEs");
  buf = shmem_calloc(256, 1);
  psync = shmem_malloc(SHMEM_REDUCE_SYNC_SIZE * sizeof(long));
  CHECK(buf && psync, "allocation");
  int calls = 0;
#define CALL_REDUCE(OP, T, C) reduce_##T##_##OP(), calls++;
#define CALL_TO_ALL(OP, T, C) to_all_##T##_##OP(), calls++;
  ARITH(CALL_REDUCE, sum) ARITH(CALL_REDUCE, prod) ORDERED(CALL_REDUCE, max) ORDERED(CALL_REDUCE, min)
  BITWISE(CALL_REDUCE, and) BITWISE(CALL_REDUCE, or) BITWISE(CALL_REDUCE, xor)
  TO_ALL_ARITH(CALL_TO_ALL, sum) TO_ALL_ARITH(CALL_TO_ALL, prod) TO_ALL_ORDERED(CALL_TO_ALL, max)
  TO_ALL_ORDERED(CALL_TO_ALL, min) TO_ALL_BITWISE(CALL_TO_ALL, and) TO_ALL_BITWISE(CALL_TO_ALL, or)
  TO_ALL_BITWISE(CALL_TO_ALL, xor)
  if (me == 0) printf("%d reductions\n", calls);
  shmem_free(psync);
  shmem_free(buf);
  PASS("reduce_all");
  shmem_finalize();
  return 0;
}
