/* slock.c: locks that are statics (the spec's lock example declares
 * `static long lock = 0;`). goshmem's Go locks live in its heap, so a
 * static lock is a C lock: the word on PE 0, reached through the mapping
 * of PE 0's statics (statics.c), holds 0 when free and the holder's PE
 * number + 1 when taken. set_lock waits until the word reads 0 (gs_wait
 * polls, and ends the wait if a PE fails), then tries to take it with a
 * compare-and-swap. The spec asks no fairness of locks. */
#include "gs.h"

/* gs_static_lock runs one lock call on a static lock and returns its
 * result (test: 0 when acquired), or -1 when lock is not a static mapped
 * from PE 0, for the Go path to handle or report. */
int gs_static_lock(const char *op, int kind, long *lock) {
  uint64_t *w = (uint64_t *)gs_at_static(lock, sizeof *lock, 0);
  if (!w || (unsigned)gs_me >= (unsigned)gs_npes) return -1;
  uint64_t mine = (uint64_t)gs_me + 1, zero = 0;
  switch (kind) {
    case GS_LOCK_CLEAR:
      /* The holder's updates complete before the next holder can enter. */
      shmem_quiet();
      __atomic_store_n(w, 0, __ATOMIC_SEQ_CST);
      return 0;
    case GS_LOCK_TEST: {
      uint64_t expect = 0;
      return __atomic_compare_exchange_n(w, &expect, mine, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST) ? 0 : 1;
    }
    default:
      for (;;) {
        uint64_t expect = 0;
        if (__atomic_compare_exchange_n(w, &expect, mine, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) return 0;
        gs_wait(op, GS_U64, 8, w, 1, NULL, NULL, SHMEM_CMP_EQ, &zero, 0, GS_WAIT_ALL, 1);
      }
  }
}
