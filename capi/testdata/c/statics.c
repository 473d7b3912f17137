/* statics.c: global and static variables are symmetric data objects
 * (OpenSHMEM 1.5, 3.2): RMA, atomics, wait, put-with-signal, locks, the
 * active-set collectives (static pSync, pWrk and data) and the team
 * collectives on statics, with initialized data (.data) and zeroed data
 * (.bss). Run on one host, peers map each other's statics; with the
 * argument "tcp" (shmemrun --network) they reach them over the network,
 * and shmem_ptr of a peer's static is NULL. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "check.h"

long initialized[4] = {11, 22, 33, 44}; /* .data: keeps its values across shmem_init */
static long dest[10];                   /* the spec's example */
static int ints[8];
static long counter;
static int icounter;
static long flag;
static uint64_t sig;
static long sdata[4];
static long lock;
static double dval;
static long pSync[SHMEM_REDUCE_SYNC_SIZE];
static long pWrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
static long asrc[4], adst[64];
static int iasrc[2], iadst[32];

/* The spec's shmem_put example: PE 0 puts ten longs into PE 1's static. */
static void spec_example(int me) {
  long source[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  if (me == 0) shmem_long_put(dest, source, 10, 1);
  shmem_barrier_all();
  if (me == 1)
    for (int i = 0; i < 10; i++) CHECK(dest[i] == i + 1, "spec example: dest[%d] = %ld", i, dest[i]);
}

/* mapped: the peers' statics are mapped here (not the "tcp" run). */
static int mapped = 1;

static void rma(int me, int n) {
  int next = (me + 1) % n, prev = (me + n - 1) % n;
  CHECK(initialized[2] == 33 && counter == 0, "statics lost their values at shmem_init");
  int v[8];
  for (int i = 0; i < 8; i++) v[i] = me * 100 + i;
  shmem_int_put(ints, v, 8, next);
  shmem_barrier_all();
  for (int i = 0; i < 8; i++) CHECK(ints[i] == prev * 100 + i, "put: ints[%d] = %d", i, ints[i]);
  long got[4];
  shmem_long_get(got, initialized, 4, next);
  CHECK(got[3] == 44, "get of .data %ld", got[3]);
  CHECK(shmem_int_g(&ints[5], next) == me * 100 + 5, "g");
  shmem_double_p(&dval, 0.5 + me, next);
  long stride[4] = {-1, -2, -3, -4};
  shmem_long_iput(dest, stride, 2, 1, 4, next); /* dest[0,2,4,6] */
  shmem_putmem_nbi(&initialized[0], &me, sizeof me, next);
  shmem_quiet();
  shmem_barrier_all();
  CHECK(dval == 0.5 + prev, "p of a double %g", dval);
  CHECK(dest[0] == -1 && dest[6] == -4, "iput %ld %ld", dest[0], dest[6]);
  CHECK((int)initialized[0] == prev, "putmem_nbi %d", (int)initialized[0]);
  CHECK((shmem_ptr(&flag, next) != NULL) == (mapped || next == me), "shmem_ptr of a static: %p", shmem_ptr(&flag, next));
  CHECK(shmem_addr_accessible(&flag, next), "shmem_addr_accessible of a static");
  shmem_barrier_all();
}

static void atomics(int me, int n) {
  for (int p = 0; p < n; p++) {
    shmem_long_atomic_add(&counter, me + 1, p);
    shmem_int_atomic_fetch_inc(&icounter, p);
  }
  shmem_barrier_all();
  CHECK(counter == (long)n * (n + 1) / 2, "atomic_add %ld", counter);
  CHECK(icounter == n, "fetch_inc %d", icounter);
  /* exactly one PE wins the compare-and-swap on PE 0's word */
  static long winners;
  if (shmem_long_atomic_compare_swap(&flag, 0, me + 1, 0) == 0) shmem_long_atomic_inc(&winners, 0);
  shmem_barrier_all();
  if (me == 0) CHECK(winners == 1 && flag >= 1 && flag <= n, "cswap: %ld winners, flag %ld", winners, flag);
  shmem_barrier_all();
  flag = 0;
  shmem_barrier_all();
}

static void wait_and_signal(int me, int n) {
  int next = (me + 1) % n, prev = (me + n - 1) % n;
  shmem_long_atomic_set(&flag, me + 1, next);
  shmem_long_wait_until(&flag, SHMEM_CMP_EQ, prev + 1);
  long d[4] = {me, me * 2, me * 3, me * 4};
  shmem_long_put_signal(sdata, d, 4, &sig, 7, SHMEM_SIGNAL_SET, next);
  CHECK(shmem_signal_wait_until(&sig, SHMEM_CMP_EQ, 7) == 7, "signal");
  CHECK(sdata[3] == prev * 4, "put_signal data %ld", sdata[3]);
  shmem_barrier_all();
}

static void locks(int me, int n) {
  static long shared_sum; /* a static inside a function is symmetric too */
  for (int i = 0; i < 3; i++) {
    shmem_set_lock(&lock);
    long v = shmem_long_g(&shared_sum, 0);
    shmem_long_p(&shared_sum, v + 1, 0);
    shmem_quiet();
    shmem_clear_lock(&lock);
  }
  shmem_barrier_all();
  if (me == 0) CHECK(shared_sum == 3L * n, "lock-protected sum %ld", shared_sum);
  shmem_barrier_all();
}

static void active_set(int me, int n) {
  for (int k = 0; k < 4; k++) asrc[k] = me * 10 + k;
  iasrc[0] = me;
  iasrc[1] = -me;
  shmem_barrier_all();
  shmem_barrier(0, 0, n, pSync);
  shmem_broadcast64(adst, asrc, 4, 0, 0, 0, n, pSync);
  if (me != 0) CHECK(adst[2] == 2, "broadcast64 %ld", adst[2]);
  shmem_fcollect64(adst, asrc, 1, 0, 0, n, pSync);
  for (int p = 0; p < n; p++) CHECK(adst[p] == p * 10, "fcollect64[%d]", p);
  shmem_collect32(iadst, iasrc, me % 2 + 1, 0, 0, n, pSync);
  for (int p = 0, off = 0; p < n; off += p % 2 + 1, p++) CHECK(iadst[off] == p, "collect32 from %d", p);
  shmem_long_sum_to_all(adst, asrc, 4, 0, 0, n, pWrk, pSync);
  CHECK(adst[1] == 10L * n * (n - 1) / 2 + n, "sum_to_all %ld", adst[1]);
  shmem_int_max_to_all(iadst, iasrc, 2, 0, 0, n, (int *)pWrk, pSync);
  CHECK(iadst[0] == n - 1 && iadst[1] == 0, "max_to_all");
  for (int p = 0; p < n; p++) asrc[p % 4] = me * 100 + p;
  shmem_barrier_all();
  if (n <= 4) {
    shmem_alltoall64(adst, asrc, 1, 0, 0, n, pSync);
    for (int p = 0; p < n; p++) CHECK(adst[p] == p * 100 + me, "alltoall64[%d]", p);
  }
  shmem_barrier_all();
}

/* The statics are a memfd since shmem_init: nameless, so nothing of them
 * is ever in /dev/shm. */
static void memfd_backed(void) {
  FILE *f = fopen("/proc/self/maps", "r");
  CHECK(f != NULL, "cannot read /proc/self/maps");
  char line[512];
  int found = 0;
  while (!found && fgets(line, sizeof line, f)) {
    unsigned long s, e;
    if (sscanf(line, "%lx-%lx", &s, &e) == 2 && (unsigned long)&flag >= s && (unsigned long)&flag < e)
      found = strstr(line, "/memfd:goshmem-statics") != NULL && strstr(line, "rw-s") != NULL;
  }
  fclose(f);
  CHECK(found, "the statics are not a shared memfd mapping");
}

static long tsrc[4], tdst[64];
static int tisrc[2], tidst[32];
static double tdsrc[2], tddst[2];

/* The team collectives, on the world and on the even PEs, with static
 * data, and with a static dest of heap data. */
static void team_collectives(int me, int n) {
  for (int k = 0; k < 4; k++) tsrc[k] = me * 10 + k;
  tisrc[0] = me;
  tisrc[1] = -me;
  tdsrc[0] = me + 0.25;
  tdsrc[1] = -me;
  shmem_barrier_all();
  CHECK(shmem_long_broadcast(SHMEM_TEAM_WORLD, tdst, tsrc, 4, n - 1) == 0, "broadcast rc");
  CHECK(tdst[3] == (n - 1) * 10 + 3, "broadcast %ld", tdst[3]);
  CHECK(shmem_long_fcollect(SHMEM_TEAM_WORLD, tdst, tsrc, 2) == 0, "fcollect rc");
  for (int p = 0; p < n; p++) CHECK(tdst[2 * p + 1] == p * 10 + 1, "fcollect[%d] %ld", p, tdst[2 * p + 1]);
  CHECK(shmem_int_collect(SHMEM_TEAM_WORLD, tidst, tisrc, me % 2 + 1) == 0, "collect rc");
  for (int p = 0, off = 0; p < n; off += p % 2 + 1, p++) CHECK(tidst[off] == p, "collect from %d: %d", p, tidst[off]);
  /* PE 0 contributes nothing */
  CHECK(shmem_int_collect(SHMEM_TEAM_WORLD, tidst, tisrc, me ? 1 : 0) == 0, "collect of 0 rc");
  for (int p = 1; p < n; p++) CHECK(tidst[p - 1] == p, "collect with an empty PE 0: [%d] = %d", p - 1, tidst[p - 1]);
  CHECK(shmem_long_sum_reduce(SHMEM_TEAM_WORLD, tdst, tsrc, 4) == 0, "sum_reduce rc");
  CHECK(tdst[2] == 10L * n * (n - 1) / 2 + 2 * n, "sum_reduce %ld", tdst[2]);
  CHECK(shmem_double_max_reduce(SHMEM_TEAM_WORLD, tddst, tdsrc, 2) == 0, "max_reduce rc");
  CHECK(tddst[0] == n - 1 + 0.25 && tddst[1] == 0, "max_reduce %g %g", tddst[0], tddst[1]);
  CHECK(shmem_int32_xor_reduce(SHMEM_TEAM_WORLD, (int32_t *)tidst, (int32_t *)tisrc, 1) == 0, "xor_reduce rc");
  int x = 0;
  for (int p = 0; p < n; p++) x ^= p;
  CHECK(tidst[0] == x, "xor_reduce %d", tidst[0]);
  for (int p = 0; p < n && p < 4; p++) tsrc[p] = me * 100 + p;
  shmem_barrier_all();
  if (n <= 4) {
    CHECK(shmem_long_alltoall(SHMEM_TEAM_WORLD, tdst, tsrc, 1) == 0, "alltoall rc");
    for (int p = 0; p < n; p++) CHECK(tdst[p] == p * 100 + me, "alltoall[%d] %ld", p, tdst[p]);
  }
  long *heap = shmem_malloc(4 * sizeof(long));
  for (int k = 0; k < 4; k++) heap[k] = me + k;
  CHECK(shmem_long_broadcast(SHMEM_TEAM_WORLD, tdst, heap, 4, 0) == 0 && tdst[3] == 3, "broadcast of heap data into a static");
  shmem_team_t even;
  shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (n + 1) / 2, NULL, 0, &even);
  if (even != SHMEM_TEAM_INVALID) {
    CHECK(shmem_long_sum_reduce(even, tdst, tsrc, 1) == 0, "even sum_reduce rc");
    long want = 0;
    for (int p = 0; p < n; p += 2) want += p * 100;
    CHECK(tdst[0] == want, "even sum_reduce %ld, want %ld", tdst[0], want);
    shmem_team_destroy(even);
  }
  shmem_free(heap);
}

/* Max and min where the last PE's element 0 is NaN: any NaN gives NaN
 * (it was dropped unless member 0 had it), on statics through the
 * active-set and the team routines, and on the heap through Go. */
static double fsrc[2], fdst[2];
static void nan_min_max(int me, int n) {
  double *h = shmem_malloc(4 * sizeof(double));
  fsrc[0] = me == n - 1 ? __builtin_nan("") : me;
  fsrc[1] = me;
  memcpy(h, fsrc, sizeof fsrc);
  shmem_barrier_all();
  shmem_double_max_to_all(fdst, fsrc, 2, 0, 0, n, (double *)pWrk, pSync);
  CHECK(fdst[0] != fdst[0] && fdst[1] == n - 1, "double_max_to_all with a NaN: %g %g", fdst[0], fdst[1]);
  shmem_barrier_all();
  shmem_double_min_to_all(fdst, fsrc, 2, 0, 0, n, (double *)pWrk, pSync);
  CHECK(fdst[0] != fdst[0] && fdst[1] == 0, "double_min_to_all with a NaN: %g %g", fdst[0], fdst[1]);
  CHECK(shmem_double_max_reduce(SHMEM_TEAM_WORLD, fdst, fsrc, 2) == 0, "double_max_reduce of statics");
  CHECK(fdst[0] != fdst[0] && fdst[1] == n - 1, "double_max_reduce of statics with a NaN: %g %g", fdst[0], fdst[1]);
  CHECK(shmem_double_min_reduce(SHMEM_TEAM_WORLD, h + 2, h, 2) == 0, "double_min_reduce");
  CHECK(h[2] != h[2] && h[3] == 0, "double_min_reduce with a NaN: %g %g", h[2], h[3]);
  shmem_free(h);
}

/* With the argument "kill", the last PE dies by SIGKILL once every PE has
 * put into its statics: the test then checks that nothing of the job is
 * left in /dev/shm. Every PE prints its pid for that check. */
int main(int argc, char **argv) {
  shmem_init();
  int me = shmem_my_pe(), n = shmem_n_pes();
  printf("pid %d\n", (int)getpid());
  memfd_backed();
  spec_example(me);
  if (argc > 1 && strcmp(argv[1], "kill") == 0) {
    shmem_barrier_all();
    if (me == n - 1) raise(SIGKILL);
    shmem_barrier_all(); /* ends with the failure of PE n-1 */
    printf("FAIL PE %d passed the barrier\n", me);
    return 1;
  }
  mapped = !(argc > 1 && strcmp(argv[1], "tcp") == 0);
  rma(me, n);
  atomics(me, n);
  wait_and_signal(me, n);
  locks(me, n);
  active_set(me, n);
  team_collectives(me, n);
  nan_min_max(me, n);
  shmem_finalize();
  PASS("statics");
  return 0;
}
