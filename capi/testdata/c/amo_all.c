/* amo_all.c: every typed atomic routine of the OpenSHMEM 1.5 spec, for
 * every type the spec gives it (standard, bitwise and extended AMO types),
 * blocking and _nbi, with and without a context, on the next PE; the
 * values returned and the values the left neighbour leaves here are
 * checked. Each PE prints "amo_all ok". */
#include <stddef.h>
#include <stdint.h>
#include "check.h"

/* The spec's AMO types: standard (all but the bitwise operations),
 * bitwise (and, or, xor), extended (fetch, set, swap). */
#define STANDARD(X)                                                                                    \
  X(int, int) X(long, long) X(longlong, long long) X(uint, unsigned int) X(ulong, unsigned long)      \
  X(ulonglong, unsigned long long) X(int32, int32_t) X(int64, int64_t) X(uint32, uint32_t)            \
  X(uint64, uint64_t) X(size, size_t) X(ptrdiff, ptrdiff_t)
#define BITWISE(X)                                                                                     \
  X(uint, unsigned int) X(ulong, unsigned long) X(ulonglong, unsigned long long) X(int32, int32_t)    \
  X(int64, int64_t) X(uint32, uint32_t) X(uint64, uint64_t)
#define EXTENDED(X) X(float, float) X(double, double)

static shmem_ctx_t ctx;
static int use_ctx;

/* AMO calls shmem_T_atomic_OP or, with use_ctx, shmem_ctx_T_atomic_OP. */
#define AMO(T, op, ...) (use_ctx ? shmem_ctx_##T##_atomic_##op(ctx, __VA_ARGS__) : shmem_##T##_atomic_##op(__VA_ARGS__))
#define QUIET() (use_ctx ? shmem_ctx_quiet(ctx) : shmem_quiet())
#define EQ(got, want, what) CHECK((got) == (want), "%s %s: got %lld, want %lld", #what, use_ctx ? "(ctx)" : "", \
                                  (long long)(got), (long long)(want))

/* The standard types: 8 words at the next PE. */
#define STANDARD_TEST(T, C)                                                                       \
  static void standard_##T(int next, C *w) {                                                      \
    C out[5] = {0};                                                                               \
    AMO(T, set, &w[0], (C)5, next);                                                               \
    QUIET();                                                                                      \
    EQ(AMO(T, fetch, &w[0], next), (C)5, T##_set_fetch);                                          \
    AMO(T, add, &w[1], (C)7, next);                                                               \
    AMO(T, inc, &w[1], next);                                                                     \
    QUIET();                                                                                      \
    EQ(AMO(T, fetch, &w[1], next), (C)8, T##_add_inc);                                            \
    EQ(AMO(T, fetch_add, &w[2], (C)3, next), (C)0, T##_fetch_add);                                \
    EQ(AMO(T, fetch_inc, &w[2], next), (C)3, T##_fetch_inc);                                      \
    EQ(AMO(T, compare_swap, &w[3], (C)0, (C)9, next), (C)0, T##_compare_swap);                    \
    EQ(AMO(T, compare_swap, &w[3], (C)0, (C)1, next), (C)9, T##_compare_swap_fails);              \
    EQ(AMO(T, swap, &w[3], (C)2, next), (C)9, T##_swap);                                          \
    AMO(T, fetch_nbi, &out[0], &w[2], next);                                                      \
    AMO(T, fetch_add_nbi, &out[1], &w[4], (C)6, next);                                            \
    AMO(T, fetch_inc_nbi, &out[2], &w[5], next);                                                  \
    AMO(T, compare_swap_nbi, &out[3], &w[6], (C)0, (C)11, next);                                  \
    AMO(T, swap_nbi, &out[4], &w[7], (C)12, next);                                                \
    QUIET();                                                                                      \
    EQ(out[0], (C)4, T##_fetch_nbi);                                                              \
    for (int i = 1; i < 5; i++) EQ(out[i], (C)0, T##_fetch_op_nbi);                               \
  }                                                                                               \
  static void standard_##T##_left(C *w) { /* what the left neighbour left here */                 \
    C want[8] = {5, 8, 4, 2, 6, 1, 11, 12};                                                       \
    for (int i = 0; i < 8; i++) EQ(w[i], want[i], T##_left);                                      \
  }
STANDARD(STANDARD_TEST)

/* The bitwise types: 3 words at the next PE. */
#define BITWISE_TEST(T, C)                                                                        \
  static void bitwise_##T(int next, C *w) {                                                       \
    C out[3] = {0};                                                                               \
    for (int i = 0; i < 3; i++) AMO(T, set, &w[i], (C)0xF0, next);                                \
    QUIET();                                                                                      \
    AMO(T, and, &w[0], (C)0x3C, next);                                                            \
    QUIET();                                                                                      \
    AMO(T, or, &w[0], (C)0x01, next);                                                             \
    QUIET();                                                                                      \
    AMO(T, xor, &w[0], (C)0xFF, next);                                                            \
    QUIET();                                                                                      \
    EQ(AMO(T, fetch, &w[0], next), (C)0xCE, T##_and_or_xor);                                     \
    EQ(AMO(T, fetch_and, &w[1], (C)0x3C, next), (C)0xF0, T##_fetch_and);                          \
    EQ(AMO(T, fetch_or, &w[1], (C)0x01, next), (C)0x30, T##_fetch_or);                            \
    EQ(AMO(T, fetch_xor, &w[1], (C)0xFF, next), (C)0x31, T##_fetch_xor);                          \
    AMO(T, fetch_and_nbi, &out[0], &w[2], (C)0x3C, next);                                         \
    QUIET();                                                                                      \
    AMO(T, fetch_or_nbi, &out[1], &w[2], (C)0x01, next);                                          \
    QUIET();                                                                                      \
    AMO(T, fetch_xor_nbi, &out[2], &w[2], (C)0xFF, next);                                         \
    QUIET();                                                                                      \
    EQ(out[0], (C)0xF0, T##_fetch_and_nbi);                                                       \
    EQ(out[1], (C)0x30, T##_fetch_or_nbi);                                                        \
    EQ(out[2], (C)0x31, T##_fetch_xor_nbi);                                                       \
  }                                                                                               \
  static void bitwise_##T##_left(C *w) {                                                          \
    for (int i = 0; i < 3; i++) EQ(w[i], (C)0xCE, T##_bitwise_left);                              \
  }
BITWISE(BITWISE_TEST)

/* The extended types: one word at the next PE (values exact in binary). */
#define EXTENDED_TEST(T, C)                                                                       \
  static void extended_##T(int next, C *w) {                                                      \
    C out[2] = {0};                                                                               \
    AMO(T, set, &w[0], (C)1.5, next);                                                             \
    QUIET();                                                                                      \
    CHECK(AMO(T, fetch, &w[0], next) == (C)1.5, #T " fetch");                                     \
    CHECK(AMO(T, swap, &w[0], (C)2.5, next) == (C)1.5, #T " swap");                               \
    AMO(T, swap_nbi, &out[0], &w[0], (C)3.5, next);                                               \
    QUIET();                                                                                      \
    AMO(T, fetch_nbi, &out[1], &w[0], next);                                                      \
    QUIET();                                                                                      \
    CHECK(out[0] == (C)2.5 && out[1] == (C)3.5, #T " nbi: %f %f", (double)out[0], (double)out[1]); \
  }                                                                                               \
  static void extended_##T##_left(C *w) { CHECK(w[0] == (C)3.5, #T " left: %f", (double)w[0]); }
EXTENDED(EXTENDED_TEST)

/* One round: every routine on fresh words, then the neighbour's results. */
static void round_of_all(int me, int n) {
  int next = (me + 1) % n;
#define S_ALLOC(T, C) C *s_##T = shmem_calloc(8, sizeof(C));
#define B_ALLOC(T, C) C *b_##T = shmem_calloc(3, sizeof(C));
#define E_ALLOC(T, C) C *e_##T = shmem_calloc(1, sizeof(C));
  STANDARD(S_ALLOC) BITWISE(B_ALLOC) EXTENDED(E_ALLOC)
  shmem_barrier_all();
#define S_RUN(T, C) standard_##T(next, s_##T);
#define B_RUN(T, C) bitwise_##T(next, b_##T);
#define E_RUN(T, C) extended_##T(next, e_##T);
  STANDARD(S_RUN) BITWISE(B_RUN) EXTENDED(E_RUN)
  shmem_barrier_all();
#define S_LEFT(T, C) standard_##T##_left(s_##T);
#define B_LEFT(T, C) bitwise_##T##_left(b_##T);
#define E_LEFT(T, C) extended_##T##_left(e_##T);
  STANDARD(S_LEFT) BITWISE(B_LEFT) EXTENDED(E_LEFT)
  shmem_barrier_all();
#define S_FREE(T, C) shmem_free(s_##T);
#define B_FREE(T, C) shmem_free(b_##T);
#define E_FREE(T, C) shmem_free(e_##T);
  STANDARD(S_FREE) BITWISE(B_FREE) EXTENDED(E_FREE)
}

int main(void) {
  shmem_init();
  int me = shmem_my_pe(), n = shmem_n_pes();
  round_of_all(me, n);
  CHECK(shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) == 0, "ctx_create");
  use_ctx = 1;
  round_of_all(me, n);
  shmem_ctx_destroy(ctx);
  PASS("amo_all");
  shmem_finalize();
  return 0;
}
