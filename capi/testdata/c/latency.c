/* latency.c: OSU-style 8-byte latencies from C (osu_oshm_put/get method:
 * PE 0 times, PE 1 is passive; warm-up, then timed iterations). Builds
 * with any OpenSHMEM's oshcc, so the same program runs on goshmem and on
 * Open MPI's OSHMEM. Prints one line per measure: "name usec". */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <shmem.h>

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int main(int argc, char **argv) {
  int iters = argc > 1 ? atoi(argv[1]) : 100000, warm = iters / 10;
  shmem_init();
  int me = shmem_my_pe();
  if (shmem_n_pes() < 2) {
    if (me == 0) printf("latency needs 2 PEs\n");
    shmem_finalize();
    return 1;
  }
  long *buf = shmem_malloc(64);
  long *ctr = shmem_malloc(sizeof(long));
  long *flag = shmem_malloc(sizeof(long));
  long src = 42;
  *ctr = 0;
  shmem_barrier_all();
  if (me == 0) {
    double t0 = 0;
    for (int i = 0; i < warm + iters; i++) {
      if (i == warm) t0 = now_us();
      shmem_putmem(buf, &src, 8, 1);
      shmem_quiet();
    }
    printf("put8+quiet %.3f\n", (now_us() - t0) / iters);
    long v = 0;
    for (int i = 0; i < warm + iters; i++) {
      if (i == warm) t0 = now_us();
      shmem_getmem(&v, buf, 8, 1);
    }
    printf("get8 %.3f\n", (now_us() - t0) / iters);
    for (int i = 0; i < warm + iters; i++) {
      if (i == warm) t0 = now_us();
      v += shmem_long_atomic_fetch_add(ctr, 1, 1);
    }
    printf("fetch_add8 %.3f\n", (now_us() - t0) / iters);
    for (int i = 0; i < warm + iters; i++) {
      if (i == warm) t0 = now_us();
      shmem_long_p(buf, i, 1);
    }
    shmem_quiet();
    printf("p8 %.3f\n", (now_us() - t0) / iters);
    for (int i = 0; i < warm + iters; i++) {
      if (i == warm) t0 = now_us();
      shmem_long_atomic_add(ctr, 1, 1);
    }
    shmem_quiet();
    printf("atomic_add8 %.3f\n", (now_us() - t0) / iters);
    if (v < 0) printf("impossible\n");
  }
  /* pingpong8: a round trip of two puts, each awaited with wait_until
   * (the OSU put latency's other method: both PEs active). */
  int piters = iters / 10;
  *flag = 0;
  shmem_barrier_all();
  double t1 = 0;
  for (long i = 1; i <= piters / 10 + piters; i++) {
    if (i == piters / 10 + 1) t1 = now_us();
    if (me == 0) {
      shmem_long_p(flag, i, 1);
      shmem_long_wait_until(flag, SHMEM_CMP_EQ, i);
    } else if (me == 1) {
      shmem_long_wait_until(flag, SHMEM_CMP_EQ, i);
      shmem_long_p(flag, i, 0);
    }
  }
  if (me == 0) printf("pingpong8 %.3f\n", (now_us() - t1) / piters);
  shmem_barrier_all();
  int biters = iters / 10;
  double t0 = 0;
  for (int i = 0; i < biters / 10 + biters; i++) {
    if (i == biters / 10) t0 = now_us();
    shmem_barrier_all();
  }
  if (me == 0) printf("barrier_all %.3f\n", (now_us() - t0) / biters);
  static long psync[SHMEM_BARRIER_SYNC_SIZE];
  for (int i = 0; i < SHMEM_BARRIER_SYNC_SIZE; i++) psync[i] = SHMEM_SYNC_VALUE;
  shmem_barrier_all();
  for (int i = 0; i < biters / 10 + biters; i++) {
    if (i == biters / 10) t0 = now_us();
    shmem_barrier(0, 0, shmem_n_pes(), psync);
  }
  if (me == 0) printf("barrier_aset %.3f\n", (now_us() - t0) / biters);
  shmem_free(flag);
  shmem_free(ctr);
  shmem_free(buf);
  shmem_finalize();
  return 0;
}
