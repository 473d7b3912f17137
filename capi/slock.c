/* slock.c: locks that are statics (the spec's lock example declares
 * `static long lock = 0;`). goshmem's Go locks live in its heap, so a
 * static lock is a C lock: the word on PE 0 holds 0 when free and the
 * holder's PE number + 1 when taken. set_lock waits until the word reads
 * 0, then tries to take it with a compare-and-swap. The spec asks no
 * fairness of locks.
 *
 * Every PE runs this one protocol on the word, whichever way it reaches
 * PE 0's statics: through the mapping of them (statics.c) on PE 0's host,
 * with C11 atomics, and over the network (gs_amo, the statics region)
 * from the other hosts or with TCP forced. A waiter on the mapping polls
 * with gs_wait; one over the network fetches the word with a backoff. Both
 * end the wait when a PE fails. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <time.h>
#include "gs.h"
#include "_cgo_export.h"

/* word is PE 0's lock word as this PE reaches it: w, the mapping, or,
 * when w is NULL, the network through gs_amo on the static lock. */
typedef struct {
  const char *op;
  long *lock;
  uint64_t *w;
} word;

/* cas swaps in want where the word holds expect and returns what it held. */
static uint64_t cas(word *x, uint64_t expect, uint64_t want) {
  if (!x->w) return gs_lock_amo(x->op, GS_AMO_CSWAP, x->lock, want, expect);
  __atomic_compare_exchange_n(x->w, &expect, want, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return expect;
}

/* await_free returns once the word has read 0. Over the network it
 * fetches the word, yielding and then napping between looks, and asks
 * every millisecond whether a PE failed (goshmem_check ends the wait), as
 * gs_wait does on the mapping. A fetch that failed returns: the caller's
 * next try fails as well and reports it. */
static void await_free(word *x) {
  uint64_t zero = 0;
  if (x->w) {
    gs_wait_mapped(x->op, GS_U64, 8, x->w, 1, NULL, NULL, SHMEM_CMP_EQ, &zero, 0, GS_WAIT_ALL, 1);
    return;
  }
  const char *e0 = goshmem_last_error();
  struct timespec nap = {0, 20000}, last, now;
  clock_gettime(CLOCK_MONOTONIC, &last);
  gs_pacer peers;
  gs_pacer_start(&peers, (uint64_t)last.tv_sec * 1000000000u + (uint64_t)last.tv_nsec);
  for (unsigned tries = 0;; tries++) {
    if (gs_lock_amo(x->op, GS_AMO_FETCH, x->lock, 0, 0) == 0 || goshmem_last_error() != e0) return;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if ((now.tv_sec - last.tv_sec) * 1000000000L + (now.tv_nsec - last.tv_nsec) > 1000000) {
      goshmem_check((char *)x->op, gs_pacer_due(&peers, (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec));
      last = now;
    }
    if (tries < 32) {
      sched_yield();
    } else {
      nanosleep(&nap, NULL);
    }
  }
}

/* gs_static_lock runs one lock call on a static lock and returns its
 * result (test: 0 when acquired), or -1 when lock is not a static, for the
 * Go path to handle or report. */
int gs_static_lock(const char *op, int kind, long *lock) {
  /* A misaligned word goes to the Go path too, which refuses it. */
  if (!gs_is_static(lock) || (unsigned)gs_me >= (unsigned)gs_npes || ((uintptr_t)lock & 7)) return -1;
  word x = {op, lock, (uint64_t *)gs_at_static(lock, sizeof *lock, 0)};
  uint64_t mine = (uint64_t)gs_me + 1;
  const char *e0 = goshmem_last_error();
  switch (kind) {
    case GS_LOCK_CLEAR: {
      /* The holder's updates complete before the next holder can enter. */
      shmem_quiet();
      /* Only the holder may clear it (the spec leaves any other clear
       * undefined): a store of 0 by another PE would let a second PE in
       * beside the holder. A compare-and-swap leaves the lock as it was
       * when this PE does not hold it, and says who does. */
      uint64_t held = cas(&x, mine, 0);
      if (held != mine && goshmem_last_error() == e0) {
        char msg[256], who[32] = "no PE holds it";
        if (held) snprintf(who, sizeof who, "PE %d holds it", (int)(held - 1));
        snprintf(msg, sizeof msg,
                 "goshmem: %s (PE %d -> PE 0): PE %d does not hold the static lock at %p (%s); only its holder may clear it: "
                 "invalid argument",
                 op, gs_me, gs_me, (void *)lock, who);
        gs_die(msg, 1);
      }
      return 0;
    }
    case GS_LOCK_TEST:
      return cas(&x, 0, mine) == 0 && goshmem_last_error() == e0 ? 0 : 1;
    default:
      /* A failed network call (SHMEMX_ERRORS_RETURN) ends the wait: the
       * error is recorded for shmemx_last_error. */
      while (cas(&x, 0, mine) != 0 && goshmem_last_error() == e0) await_free(&x);
      return 0;
  }
}
