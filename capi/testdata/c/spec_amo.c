/* spec_amo.c: the scenarios of the OpenSHMEM 1.5 specification's atomic
 * examples (shmem_atomic_add, _compare_swap, _fetch_add, _fetch_inc, _inc,
 * _swap), written for this test: the same statics, calls and expected
 * values, each checked here. Every PE prints "spec_amo ok" after all. */
#include "check.h"

static int add_dst = 22;
static int race_winner = -1;
static int fadd_dst = 22;
static int finc_dst = 22;
static int inc_dst = 74;
static long swap_dest;
static int firsts;

/* shmem_atomic_add: PE 1 adds 44 to PE 0's 22. */
static void add(int me) {
  if (me == 1) shmem_atomic_add(&add_dst, 44, 0);
  shmem_barrier_all();
  printf("%d: dst = %d\n", me, add_dst);
  CHECK(add_dst == (me == 0 ? 66 : 22), "atomic_add: dst=%d", add_dst);
}

/* shmem_atomic_compare_swap: every PE races to put its number into PE
 * 0's -1; exactly one finds -1 and prints that it was first. */
static void compare_swap(int me) {
  int old = shmem_atomic_compare_swap(&race_winner, -1, me, 0);
  if (old == -1) {
    printf("PE %d was first\n", me);
    shmem_atomic_inc(&firsts, 0);
  }
  shmem_barrier_all();
  if (me == 0) CHECK(firsts == 1 && race_winner >= 0, "compare_swap: %d winners, winner %d", firsts, race_winner);
}

/* shmem_atomic_fetch_add: PE 1 adds 44 to PE 0's 22 and gets 22 back. */
static void fetch_add(int me) {
  int old = -1;
  if (me == 1) old = shmem_atomic_fetch_add(&fadd_dst, 44, 0);
  shmem_barrier_all();
  printf("%d: old = %d, dst = %d\n", me, old, fadd_dst);
  CHECK(old == (me == 1 ? 22 : -1) && fadd_dst == (me == 0 ? 66 : 22), "fetch_add: old=%d dst=%d", old, fadd_dst);
}

/* shmem_atomic_fetch_inc: PE 0 increments PE 1's 22 and gets 22 back. */
static void fetch_inc(int me) {
  int old = -1;
  if (me == 0) old = shmem_atomic_fetch_inc(&finc_dst, 1);
  shmem_barrier_all();
  printf("%d: old = %d, dst = %d\n", me, old, finc_dst);
  CHECK(old == (me == 0 ? 22 : -1) && finc_dst == (me == 1 ? 23 : 22), "fetch_inc: old=%d dst=%d", old, finc_dst);
}

/* shmem_atomic_inc: PE 0 increments PE 1's 74. */
static void inc(int me) {
  if (me == 0) shmem_atomic_inc(&inc_dst, 1);
  shmem_barrier_all();
  printf("%d: dst = %d\n", me, inc_dst);
  CHECK(inc_dst == (me == 1 ? 75 : 74), "atomic_inc: dst=%d", inc_dst);
}

/* shmem_atomic_swap: each odd PE swaps its number into the next PE's
 * dest, which held that PE's number. */
static void swap(int me, int n) {
  swap_dest = me;
  shmem_barrier_all();
  if (me & 1) {
    long next = (me + 1) % n;
    long swapped = shmem_atomic_swap(&swap_dest, (long)me, (int)next);
    printf("%d: dest = %ld, swapped = %ld\n", me, swap_dest, swapped);
    CHECK(swapped == next, "atomic_swap: swapped %ld, want %ld", swapped, next);
  }
  shmem_barrier_all();
  long want = (me & 1) == 0 ? (me + n - 1) % n : me; /* an even PE got its odd left neighbour's number */
  CHECK(swap_dest == want, "atomic_swap: dest=%ld want %ld", swap_dest, want);
}

int main(void) {
  shmem_init();
  int me = shmem_my_pe(), n = shmem_n_pes();
  CHECK(n >= 2 && n % 2 == 0, "the examples here need an even number of PEs");
  add(me);
  compare_swap(me);
  fetch_add(me);
  fetch_inc(me);
  inc(me);
  swap(me, n);
  PASS("spec_amo");
  shmem_finalize();
  return 0;
}
