/* rma_all.c: every typed RMA routine of the OpenSHMEM 1.5 spec (put, get,
 * p, g, iput, iget, put_nbi, get_nbi, put_signal, put_signal_nbi) for
 * every standard RMA type, with and without a context, the sized ones
 * (put8 .. put128 and their forms), and the typed team collectives
 * (broadcast, collect, fcollect, alltoall, alltoalls) for every type; each
 * PE writes to the next and checks what its left neighbour wrote. Each PE
 * prints "rma_all ok". */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "check.h"

#define TYPES(X)                                                                                             \
  X(float, float) X(double, double) X(longdouble, long double) X(char, char) X(schar, signed char)         \
  X(short, short) X(int, int) X(long, long) X(longlong, long long) X(uchar, unsigned char)                 \
  X(ushort, unsigned short) X(uint, unsigned int) X(ulong, unsigned long) X(ulonglong, unsigned long long)  \
  X(int8, int8_t) X(int16, int16_t) X(int32, int32_t) X(int64, int64_t) X(uint8, uint8_t)                   \
  X(uint16, uint16_t) X(uint32, uint32_t) X(uint64, uint64_t) X(size, size_t) X(ptrdiff, ptrdiff_t)

static shmem_ctx_t ctx;
static int use_ctx, me, n, next, left;

/* RMA calls shmem_T_OP or, with use_ctx, shmem_ctx_T_OP. */
#define RMA(T, op, ...) (use_ctx ? shmem_ctx_##T##_##op(ctx, __VA_ARGS__) : shmem_##T##_##op(__VA_ARGS__))
#define QUIET() (use_ctx ? shmem_ctx_quiet(ctx) : shmem_quiet())
/* PE pe's value for word k: small enough for every type. */
#define VAL(C, pe, k) ((C)((pe) * 16 + (k) % 16 + 1))
#define SAME(got, want, what) CHECK((got) == (want), "%s%s: got %g, want %g", what, use_ctx ? " (ctx)" : "", \
                                    (double)(got), (double)(want))

/* Words of w at the next PE: [0,4) put, [4,8) put_nbi, 8 p, 9/11/13 iput
 * (stride 2), [16,20) put_signal (signal s[0] set), [20,24) put_signal_nbi
 * (signal s[1] added). */
#define RMA_TEST(T, C)                                                                              \
  static void rma_##T(void) {                                                                       \
    const char *t = "shmem_" #T;                                                                    \
    C *w = shmem_calloc(24, sizeof(C)), src[24], back[4] = {0};                                     \
    uint64_t *s = shmem_calloc(2, sizeof(uint64_t));                                                \
    CHECK(w && s, "%s: allocation", t);                                                             \
    for (int k = 0; k < 24; k++) src[k] = VAL(C, me, k);                                            \
    shmem_barrier_all();                                                                            \
    RMA(T, put, w, src, 4, next);                                                                   \
    RMA(T, put_nbi, w + 4, src + 4, 4, next);                                                       \
    RMA(T, p, w + 8, src[8], next);                                                                 \
    RMA(T, iput, w + 9, src + 9, 2, 1, 3, next);                                                    \
    RMA(T, put_signal, w + 16, src + 16, 4, s, 1, SHMEM_SIGNAL_SET, next);                          \
    RMA(T, put_signal_nbi, w + 20, src + 20, 4, s + 1, 1, SHMEM_SIGNAL_ADD, next);                  \
    QUIET();                                                                                        \
    shmem_signal_wait_until(s, SHMEM_CMP_EQ, 1);                                                    \
    shmem_signal_wait_until(s + 1, SHMEM_CMP_EQ, 1);                                                \
    for (int k = 16; k < 24; k++) SAME(w[k], VAL(C, left, k), t); /* the signals cover these */    \
    shmem_barrier_all();                                                                            \
    for (int k = 0; k < 9; k++) SAME(w[k], VAL(C, left, k), t);                                     \
    SAME(w[9], VAL(C, left, 9), t);                                                                 \
    SAME(w[10], (C)0, t);                                                                           \
    SAME(w[11], VAL(C, left, 10), t);                                                               \
    SAME(w[13], VAL(C, left, 11), t);                                                               \
    /* Gets read back from the next PE what this PE put there. */                                   \
    RMA(T, get, back, w, 4, next);                                                                  \
    for (int k = 0; k < 4; k++) SAME(back[k], VAL(C, me, k), t);                                    \
    RMA(T, get_nbi, back, w + 4, 4, next);                                                          \
    QUIET();                                                                                        \
    for (int k = 0; k < 4; k++) SAME(back[k], VAL(C, me, k + 4), t);                                \
    SAME(RMA(T, g, w + 8, next), VAL(C, me, 8), t);                                                 \
    RMA(T, iget, back, w + 9, 1, 2, 3, next);                                                       \
    SAME(back[0], VAL(C, me, 9), t);                                                                \
    SAME(back[1], VAL(C, me, 10), t);                                                               \
    SAME(back[2], VAL(C, me, 11), t);                                                               \
    shmem_barrier_all();                                                                            \
    shmem_free(s);                                                                                  \
    shmem_free(w);                                                                                  \
  }
TYPES(RMA_TEST)

/* The typed team collectives: broadcast from PE 1, collect of me%2+1
 * words each, fcollect of 2 each, alltoall of 1 each, alltoalls of 1
 * each with strides 2 (dest) and 3 (source). */
#define COLL_TEST(T, C)                                                                             \
  static void coll_##T(void) {                                                                      \
    const char *t = "shmem_" #T " collectives";                                                     \
    C *src = shmem_calloc(3 * n, sizeof(C)), *dst = shmem_calloc(3 * n, sizeof(C));                 \
    CHECK(src && dst, "%s: allocation", t);                                                         \
    for (int k = 0; k < 3 * n; k++) src[k] = VAL(C, me, k);                                         \
    shmem_barrier_all();                                                                            \
    CHECK(shmem_##T##_broadcast(SHMEM_TEAM_WORLD, dst, src, 3, 1) == 0, "%s: broadcast", t);        \
    for (int k = 0; k < 3; k++) SAME(dst[k], VAL(C, 1, k), t);                                      \
    shmem_barrier_all();                                                                            \
    CHECK(shmem_##T##_collect(SHMEM_TEAM_WORLD, dst, src, me % 2 + 1) == 0, "%s: collect", t);      \
    for (int pe = 0, j = 0; pe < n; pe++)                                                           \
      for (int k = 0; k < pe % 2 + 1; k++, j++) SAME(dst[j], VAL(C, pe, k), t);                     \
    shmem_barrier_all();                                                                            \
    CHECK(shmem_##T##_fcollect(SHMEM_TEAM_WORLD, dst, src, 2) == 0, "%s: fcollect", t);             \
    for (int pe = 0; pe < n; pe++)                                                                  \
      for (int k = 0; k < 2; k++) SAME(dst[2 * pe + k], VAL(C, pe, k), t);                           \
    shmem_barrier_all();                                                                            \
    CHECK(shmem_##T##_alltoall(SHMEM_TEAM_WORLD, dst, src, 1) == 0, "%s: alltoall", t);             \
    for (int pe = 0; pe < n; pe++) SAME(dst[pe], VAL(C, pe, me), t);                                \
    shmem_barrier_all();                                                                            \
    for (int k = 0; k < 3 * n; k++) dst[k] = 0;                                                     \
    shmem_barrier_all();                                                                            \
    CHECK(shmem_##T##_alltoalls(SHMEM_TEAM_WORLD, dst, src, 2, 3, 1) == 0, "%s: alltoalls", t);     \
    for (int pe = 0; pe < n; pe++) {                                                                \
      SAME(dst[2 * pe], VAL(C, pe, 3 * me), t);                                                     \
      SAME(dst[2 * pe + 1], (C)0, t);                                                               \
    }                                                                                               \
    shmem_barrier_all();                                                                            \
    shmem_free(dst);                                                                                \
    shmem_free(src);                                                                                \
  }
TYPES(COLL_TEST)

/* The sized routines: SIZE bits a element, moved as bytes and compared. */
#define SIZED(X) X(8, 1) X(16, 2) X(32, 4) X(64, 8) X(128, 16)
#define SIZED_TEST(B, E)                                                                            \
  static void sized_##B(void) {                                                                     \
    const char *t = "shmem_put" #B " and its forms";                                                \
    unsigned char *w = shmem_calloc(12, E), *s8 = shmem_calloc(2, sizeof(uint64_t));                \
    uint64_t *s = (uint64_t *)s8;                                                                   \
    unsigned char src[12 * E], back[12 * E];                                                        \
    CHECK(w && s, "%s: allocation", t);                                                             \
    for (int k = 0; k < 12 * E; k++) src[k] = (unsigned char)(me * 50 + k % 50 + 1);                \
    shmem_barrier_all();                                                                            \
    if (use_ctx) {                                                                                  \
      shmem_ctx_put##B(ctx, w, src, 2, next);                                                       \
      shmem_ctx_put##B##_nbi(ctx, w + 2 * E, src + 2 * E, 2, next);                                 \
      shmem_ctx_iput##B(ctx, w + 4 * E, src + 4 * E, 2, 1, 2, next); /* elements 4 and 6 */         \
      shmem_ctx_put##B##_signal(ctx, w + 8 * E, src + 8 * E, 2, s, 1, SHMEM_SIGNAL_SET, next);     \
      shmem_ctx_put##B##_signal_nbi(ctx, w + 10 * E, src + 10 * E, 2, s + 1, 1, SHMEM_SIGNAL_SET, next); \
    } else {                                                                                        \
      shmem_put##B(w, src, 2, next);                                                                \
      shmem_put##B##_nbi(w + 2 * E, src + 2 * E, 2, next);                                          \
      shmem_iput##B(w + 4 * E, src + 4 * E, 2, 1, 2, next);                                         \
      shmem_put##B##_signal(w + 8 * E, src + 8 * E, 2, s, 1, SHMEM_SIGNAL_SET, next);               \
      shmem_put##B##_signal_nbi(w + 10 * E, src + 10 * E, 2, s + 1, 1, SHMEM_SIGNAL_SET, next);     \
    }                                                                                               \
    QUIET();                                                                                        \
    shmem_signal_wait_until(s, SHMEM_CMP_EQ, 1);                                                    \
    shmem_signal_wait_until(s + 1, SHMEM_CMP_EQ, 1);                                                \
    shmem_barrier_all();                                                                            \
    unsigned char want[12 * E];                                                                     \
    for (int k = 0; k < 12 * E; k++) want[k] = (unsigned char)(left * 50 + k % 50 + 1);             \
    CHECK(memcmp(w, want, 5 * E) == 0 && memcmp(w + 6 * E, want + 5 * E, E) == 0 &&                 \
              memcmp(w + 8 * E, want + 8 * E, 4 * E) == 0,                                          \
          "%s%s: wrong bytes", t, use_ctx ? " (ctx)" : "");                                         \
    if (use_ctx) {                                                                                  \
      shmem_ctx_get##B(ctx, back, w, 2, next);                                                      \
      shmem_ctx_get##B##_nbi(ctx, back + 2 * E, w + 2 * E, 2, next);                                \
      shmem_ctx_iget##B(ctx, back + 4 * E, w + 4 * E, 1, 2, 2, next);                               \
    } else {                                                                                        \
      shmem_get##B(back, w, 2, next);                                                               \
      shmem_get##B##_nbi(back + 2 * E, w + 2 * E, 2, next);                                         \
      shmem_iget##B(back + 4 * E, w + 4 * E, 1, 2, 2, next);                                        \
    }                                                                                               \
    QUIET();                                                                                        \
    CHECK(memcmp(back, src, 6 * E) == 0, "%s%s: gets read wrong bytes", t, use_ctx ? " (ctx)" : ""); \
    shmem_barrier_all();                                                                            \
    shmem_free(s8);                                                                                 \
    shmem_free(w);                                                                                  \
  }
SIZED(SIZED_TEST)

static void round_of_all(void) {
#define RUN_RMA(T, C) rma_##T();
#define RUN_SIZED(B, E) sized_##B();
  TYPES(RUN_RMA)
  SIZED(RUN_SIZED)
}

int main(void) {
  shmem_init();
  me = shmem_my_pe();
  n = shmem_n_pes();
  next = (me + 1) % n;
  left = (me + n - 1) % n;
  CHECK(n >= 2, "rma_all needs 2 PEs at least");
  round_of_all();
  CHECK(shmem_ctx_create(0, &ctx) == 0, "ctx_create");
  use_ctx = 1;
  round_of_all();
  shmem_ctx_destroy(ctx);
#define RUN_COLL(T, C) coll_##T();
  TYPES(RUN_COLL)
  PASS("rma_all");
  shmem_finalize();
  return 0;
}
