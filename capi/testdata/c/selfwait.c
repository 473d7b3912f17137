/* selfwait.c: point-to-point waits on one variable, where over the
 * network (no peer mapped) they sleep in Go's wait: a round trip of puts
 * and waits, put-with-signal and signal_wait_until, the _any and _some
 * forms on one variable, a wait on a variable another thread of the same
 * PE sets through the API, and shmem_ptr of the PE's own memory (never
 * NULL, though its own writes then go through Go). */
#include <pthread.h>
#include "check.h"

static long *flag;
static long sflag;
static long sdata[4];
static uint64_t ssig;

static void *setter(void *arg) {
  (void)arg;
  for (long i = 1; i <= 50; i++) {
    shmem_long_wait_until(flag + 1, SHMEM_CMP_EQ, i); /* the main thread asks */
    shmem_long_atomic_set(flag, i, shmem_my_pe());    /* and this answers */
  }
  return NULL;
}

int main(void) {
  int provided;
  shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
  int me = shmem_my_pe(), n = shmem_n_pes();
  flag = shmem_calloc(2, sizeof(long));
  uint64_t *sig = shmem_calloc(1, sizeof(uint64_t));
  int *data = shmem_calloc(4, sizeof(int));
  CHECK(shmem_ptr(flag, me) == flag, "shmem_ptr of the PE's own heap: %p, want %p", shmem_ptr(flag, me), (void *)flag);
  CHECK(shmem_ptr(&sflag, me) == &sflag, "shmem_ptr of the PE's own static");
  shmem_barrier_all();

  /* a ring of puts and waits, every PE in turn */
  int next = (me + 1) % n, prev = (me + n - 1) % n;
  for (long i = 1; i <= 100; i++) {
    if (me == 0) {
      shmem_long_p(flag, i, next);
      shmem_long_wait_until(flag, SHMEM_CMP_EQ, i);
    } else {
      shmem_long_wait_until(flag, SHMEM_CMP_GE, i);
      CHECK(*flag == i, "ring round %ld: flag %ld from PE %d", i, *flag, prev);
      shmem_long_p(flag, i, next);
    }
  }
  shmem_barrier_all();

  /* put-with-signal: the data is there once the signal is */
  int src[4] = {me, me + 1, me + 2, me + 3};
  shmem_int_put_signal(data, src, 4, sig, 7, SHMEM_SIGNAL_SET, next);
  uint64_t got = shmem_signal_wait_until(sig, SHMEM_CMP_EQ, 7);
  CHECK(got == 7, "signal %llu", (unsigned long long)got);
  for (int k = 0; k < 4; k++) CHECK(data[k] == prev + k, "data[%d] %d from PE %d", k, data[k], prev);
  shmem_barrier_all();

  /* put-with-signal to the PE itself, the data and the signal one in the
   * heap and one in the statics (over the network the PE's own heap is
   * reached through goshmem, its statics are not) */
  long lsrc[4] = {me + 10, me + 11, me + 12, me + 13};
  long *hdata = shmem_calloc(4, sizeof(long));
  *sig = 0;
  shmem_long_put_signal(sdata, lsrc, 4, sig, 3, SHMEM_SIGNAL_SET, me);
  CHECK(shmem_signal_wait_until(sig, SHMEM_CMP_EQ, 3) == 3 && sdata[3] == me + 13, "self put_signal, static data");
  shmem_long_put_signal_nbi(hdata, lsrc, 4, &ssig, 5, SHMEM_SIGNAL_ADD, me);
  shmem_quiet();
  CHECK(ssig == 5 && hdata[0] == me + 10 && hdata[3] == me + 13, "self put_signal_nbi, static signal: %llu", (unsigned long long)ssig);
  shmem_barrier_all();
  shmem_free(hdata);

  /* _any and _some on one variable */
  shmem_long_atomic_set(flag, -5, next);
  shmem_barrier_all();
  CHECK(shmem_long_wait_until_any(flag, 1, NULL, SHMEM_CMP_EQ, -5) == 0, "wait_until_any on one variable");
  size_t idx[1] = {99};
  CHECK(shmem_long_wait_until_some(flag, 1, idx, NULL, SHMEM_CMP_EQ, -5) == 1 && idx[0] == 0, "wait_until_some on one variable");
  shmem_barrier_all();

  /* another thread of this PE answers through the API */
  *flag = 0;
  shmem_barrier_all();
  pthread_t th;
  CHECK(pthread_create(&th, NULL, setter, NULL) == 0, "pthread_create");
  for (long i = 1; i <= 50; i++) {
    shmem_long_atomic_set(flag + 1, i, me);
    shmem_long_wait_until(flag, SHMEM_CMP_EQ, i);
  }
  pthread_join(th, NULL);
  shmem_barrier_all();
  PASS("selfwait");
  shmem_finalize();
  return 0;
}
