/* p2p.c: wait and test on local symmetric variables.
 *
 * Waiting happens in C: puts from mapped peers are plain stores that ring
 * nothing, so the waiter polls its memory (spinning, then yielding, then
 * napping briefly) and every millisecond asks Go whether a PE has failed,
 * so that a dead peer ends the wait with goshmem's error instead of a hang.
 * Writes from unmapped peers are landed by Go's network readers on this
 * PE's core; the waiter yields to them, or with no peer mapped waits in
 * Go (gs_wait). */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <time.h>
#include "gs.h"
#include "_cgo_export.h"

#define LOAD(T, p) ((int64_t)__atomic_load_n((const T *)(p), __ATOMIC_ACQUIRE))
#define LOADU(T, p) ((uint64_t)__atomic_load_n((const T *)(p), __ATOMIC_ACQUIRE))

static int cmp_signed(int64_t a, int cmp, int64_t b) {
  switch (cmp) {
    case SHMEM_CMP_EQ: return a == b;
    case SHMEM_CMP_NE: return a != b;
    case SHMEM_CMP_GT: return a > b;
    case SHMEM_CMP_GE: return a >= b;
    case SHMEM_CMP_LT: return a < b;
    default: return a <= b;
  }
}

static int cmp_unsigned(uint64_t a, int cmp, uint64_t b) {
  switch (cmp) {
    case SHMEM_CMP_EQ: return a == b;
    case SHMEM_CMP_NE: return a != b;
    case SHMEM_CMP_GT: return a > b;
    case SHMEM_CMP_GE: return a >= b;
    case SHMEM_CMP_LT: return a < b;
    default: return a <= b;
  }
}

/* holds reports whether ivar (of type code tc) compares true against v. */
static int holds(int tc, const void *ivar, int cmp, const void *v) {
  switch (tc) {
    case GS_I16: return cmp_signed(LOAD(int16_t, ivar), cmp, *(const int16_t *)v);
    case GS_I32: return cmp_signed(LOAD(int32_t, ivar), cmp, *(const int32_t *)v);
    case GS_I64: return cmp_signed(LOAD(int64_t, ivar), cmp, *(const int64_t *)v);
    case GS_U16: return cmp_unsigned(LOADU(uint16_t, ivar), cmp, *(const uint16_t *)v);
    case GS_U32: return cmp_unsigned(LOADU(uint32_t, ivar), cmp, *(const uint32_t *)v);
    default: return cmp_unsigned(LOADU(uint64_t, ivar), cmp, *(const uint64_t *)v);
  }
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ volatile("yield");
#endif
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* any_turn places the scans of the _any forms (any_start). */
static uint64_t any_turn;

/* any_start returns the index at which an _any call on n elements starts
 * its scan. The spec requires that a series of calls eventually return
 * every element that satisfies the condition, so a scan cannot always
 * start at 0: the starts follow a Weyl sequence (golden-ratio steps of
 * one counter), as the Go side's PE.anyStart does. */
static size_t any_start(size_t n) {
  uint64_t x = __atomic_add_fetch(&any_turn, 0x9e3779b97f4a7c15ull, __ATOMIC_RELAXED);
  return (size_t)(((unsigned __int128)x * n) >> 64);
}

/* check evaluates the wait once, scanning from index first (wrapping
 * around): for ALL whether every index counts, for ANY the first index
 * that does (SIZE_MAX: none), for SOME how many do (their indices written
 * to indices). */
static size_t check(int mode, int tc, size_t esize, const char *ivars, size_t n, size_t first, const int *status,
                    size_t *indices, int cmp, const char *values, int vector, int *done) {
  size_t found = 0, live = 0;
  for (size_t k = 0; k < n; k++) {
    size_t i = first + k < n ? first + k : first + k - n;
    if (status && status[i]) continue;
    live++;
    int ok = holds(tc, ivars + i * esize, cmp, values + (vector ? i * esize : 0));
    if (mode == GS_WAIT_ALL && !ok) {
      *done = 0;
      return 0;
    }
    if (ok && mode == GS_WAIT_ANY) {
      *done = 1;
      return i;
    }
    if (ok && mode == GS_WAIT_SOME) indices[found++] = i;
  }
  switch (mode) {
    case GS_WAIT_ALL: *done = 1; return 1;
    case GS_WAIT_ANY: *done = live == 0; return SIZE_MAX;
    default: *done = found > 0 || live == 0; return found;
  }
}

/* test_misses counts the test forms' misses (gs_test_missed);
 * test_checked is when a miss last asked Go whether a PE failed. */
static uint32_t test_misses;
static uint64_t test_checked;

/* gs_test_missed is called on a test form's miss and by
 * shmem_signal_fetch, which programs spin on alike: such a loop keeps this
 * PE's core, which shmemrun binds it to, from the network reader that
 * would land the awaited write (a test-loop ping-pong over TCP: 4-6 ms a
 * round trip, wait_until's 42 us). With peers not mapped, every 64th call
 * yields the core, as the waits do. A loop of misses is the program's own
 * wait, and ends as the library's do when a PE fails: every 256th miss
 * reads the clock, and a millisecond after the last look asks Go
 * (goshmem_check), which ends the PE with op's error, or under
 * SHMEMX_ERRORS_RETURN records it for shmemx_last_error. A hit costs
 * nothing of this. */
void gs_test_missed(const char *op) {
  uint32_t m = __atomic_add_fetch(&test_misses, 1, __ATOMIC_RELAXED);
  if (gs_unmapped_peers && m % 64 == 0) sched_yield();
  if (m % 256 != 0) return;
  uint64_t t = now_ns(), last = __atomic_load_n(&test_checked, __ATOMIC_RELAXED);
  if (t - last < 1000000 || !__atomic_compare_exchange_n(&test_checked, &last, t, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
    return;
  if (gs_npes) goshmem_check((char *)op, 0);
}

/* gs_wait refuses ivars that are not this PE's symmetric memory (the
 * spec requires them symmetric): no other PE can change them, and a wait
 * on a stack variable polled forever. It refuses misaligned ones too, as
 * goshmem's wait over the network does. */
size_t gs_wait(const char *op, int tc, size_t esize, void *ivars, size_t n, const int *status, size_t *indices,
               int cmp, const void *values, int vector, int mode, int block) {
  size_t bytes = n * esize, off = (size_t)((const char *)ivars - gs_dbase);
  if (n && (((uintptr_t)ivars & (esize - 1)) || (!gs_in_heap(ivars, bytes) && !(off < gs_dsize && bytes <= gs_dsize - off)))) {
    goshmem_bad_ivars((char *)op, ivars, bytes, esize);
    return mode == GS_WAIT_ANY ? SIZE_MAX : 0; /* SHMEMX_ERRORS_RETURN */
  }
  return gs_wait_mapped(op, tc, esize, ivars, n, status, indices, cmp, values, vector, mode, block);
}

size_t gs_wait_mapped(const char *op, int tc, size_t esize, void *ivars, size_t n, const int *status, size_t *indices,
                      int cmp, const void *values, int vector, int mode, int block) {
  if (cmp < SHMEM_CMP_EQ || cmp > SHMEM_CMP_LE) {
    char msg[160];
    snprintf(msg, sizeof msg, "goshmem: %s: invalid comparison %d", op, cmp);
    gs_die(msg, 1);
  }
  int done = 0;
  size_t first = mode == GS_WAIT_ANY ? any_start(n) : 0;
  size_t r = check(mode, tc, esize, ivars, n, first, status, indices, cmp, values, vector, &done);
  if (!done && !block) gs_test_missed(op);
  if (done || !block) return mode == GS_WAIT_ANY && !done ? SIZE_MAX : r;
  /* With no peer mapped every write into this PE comes through Go and
   * rings its bell: a single variable of the heap waits there, asleep, and
   * leaves the core to the network reader (put-and-wait ping-pong over
   * TCP: 42 µs a round trip, 75 polling here). */
  int in_go = gs_no_mapped_peers && n == 1 && !status ? goshmem_wait1((char *)op, tc, ivars, cmp, (void *)values) : 0;
  if (in_go > 0) {
    if (mode == GS_WAIT_SOME) indices[0] = 0;
    return mode == GS_WAIT_ANY ? 0 : 1;
  }
  /* A failure that did not end the program (SHMEMX_ERRORS_RETURN) ends
   * the wait unsatisfied: none found, for the _any and _some forms. */
  if (in_go < 0) return mode == GS_WAIT_ANY ? SIZE_MAX : 0;
  uint64_t start = now_ns(), last_check = start;
  /* A write from a mapped peer comes from another core: spinning catches
   * it soonest. One from an unmapped peer is landed by this process's
   * network reader, which shares this PE's core (shmemrun binds each PE to
   * one): spinning then only delays it, so the waiter soon yields between
   * checks (and the reader's poll yields the thread back; rdma.busyConn). */
  unsigned spin = gs_unmapped_peers ? 32 : 2000;
  gs_pacer peers;
  gs_pacer_start(&peers, start);
  for (unsigned spins = 0;; spins++) {
    r = check(mode, tc, esize, ivars, n, first, status, indices, cmp, values, vector, &done);
    if (done) return r;
    if (spins < spin) {
      cpu_relax();
      continue;
    }
    uint64_t t = now_ns();
    if (t - last_check > 1000000) {
      if (goshmem_check((char *)op, gs_pacer_due(&peers, t))) return mode == GS_WAIT_ANY ? SIZE_MAX : 0;
      last_check = t;
    }
    if (t - start < 2000000) {
      sched_yield();
    } else {
      /* A long wait naps: it must not starve the PE it waits for of a
       * shared core. 20 us bounds the added latency. */
      struct timespec ts = {0, 20000};
      nanosleep(&ts, NULL);
    }
  }
}

/* gs_signal_wait waits until *sig compares true against v and returns a
 * value of *sig that did, as the spec's shmem_signal_wait_until returns:
 * a second load after the wait could read a later put's signal that does
 * not (seen: 1 call in 100 while a peer flipped the signal). A wait ended
 * by a failure under SHMEMX_ERRORS_RETURN returns what *sig holds. */
uint64_t gs_signal_wait(const char *op, uint64_t *sig, int cmp, uint64_t v) {
  for (;;) {
    if (gs_wait(op, GS_U64, 8, sig, 1, NULL, NULL, cmp, &v, 0, GS_WAIT_ALL, 1) != 1) return LOADU(uint64_t, sig);
    uint64_t got = LOADU(uint64_t, sig);
    if (cmp_unsigned(got, cmp, v)) return got;
  }
}
