/* spec_rma.c: the scenarios of the OpenSHMEM 1.5 specification's RMA
 * examples (shmem_put, shmem_p, shmem_g, shmem_iput, shmem_put_signal,
 * shmem_ptr, shmem_fence, shmem_quiet, hello-openshmem), written for this
 * test: the same data, calls and expected values, each checked here, on
 * statics as the spec's examples use them. Every PE prints "spec_rma ok"
 * after all of them. */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "check.h"

static long put_dest[10];
static double p_target = 3.1415927;
static long g_source = 10101;
static short iput_dest[10];
static uint64_t signal_word;
static int ptr_dest[4];
static long fence_dest[10];
static int fence_flag;
static long quiet_dest[3];
static long quiet_src[3] = {1, 2, 3};
static int quiet_flag;
static int quiet_val = 90;

/* hello-openshmem and shmem_n_pes: every PE knows its number and the count. */
static void hello(int me, int n) {
  printf("Hello from %d of %d\n", me, n);
  CHECK(me >= 0 && me < n, "my_pe %d of %d", me, n);
}

/* shmem_put: PE 0 puts ten longs into PE 1's static array. */
static void put(int me) {
  long ten[10];
  for (int i = 0; i < 10; i++) ten[i] = i + 1;
  if (me == 0) shmem_put(put_dest, ten, 10, 1);
  shmem_barrier_all();
  long want = me == 1 ? 1 : 0;
  printf("dest[0] on PE %d is %ld\n", me, put_dest[0]);
  CHECK(put_dest[0] == want && (me != 1 || put_dest[9] == 10), "put: dest[0]=%ld dest[9]=%ld", put_dest[0], put_dest[9]);
}

/* shmem_p: PE 0 writes e into PE 1's static double. */
static void p(int me) {
  const double e = 2.71828182;
  if (me == 0) shmem_p(&p_target, e, 1);
  shmem_barrier_all();
  if (me == 1) CHECK(fabs(p_target - e) < 1e-8, "p: %f", p_target);
}

/* shmem_g: PE 0 reads the last PE's static long. */
static void g(int me, int n) {
  long y = -1;
  if (me == 0) y = shmem_g(&g_source, n - 1);
  CHECK(y == (me == 0 ? 10101 : -1), "g: y=%ld", y);
  shmem_barrier_all();
}

/* shmem_iput: every other short of the source into PE 1's first five. */
static void iput(int me) {
  short src[10];
  for (int i = 0; i < 10; i++) src[i] = (short)(i + 1);
  if (me == 0) shmem_iput(iput_dest, src, 1, 2, 5, 1);
  shmem_barrier_all();
  if (me == 1) {
    printf("dest on PE 1 is %hd %hd %hd %hd %hd\n", iput_dest[0], iput_dest[1], iput_dest[2], iput_dest[3], iput_dest[4]);
    for (int i = 0; i < 5; i++) CHECK(iput_dest[i] == 2 * i + 1, "iput: dest[%d]=%hd", i, iput_dest[i]);
  }
}

/* shmem_put_signal: PE 0 sends a message to the next PE with a signal;
 * each other PE waits for its signal, then forwards what it got. Here PE
 * 0 also waits for the message to come round the ring. */
static void put_signal(int me, int n) {
  enum { size = 2048 };
  uint64_t *message = malloc(size * sizeof(uint64_t));
  uint64_t *data = shmem_calloc(size, sizeof(uint64_t));
  CHECK(message && data, "put_signal: allocation");
  for (int i = 0; i < size; i++) message[i] = (uint64_t)me + 7;
  int next = (me + 1) % n;
  if (me == 0) {
    shmem_put_signal(data, message, size, &signal_word, 1, SHMEM_SIGNAL_SET, next);
    shmem_wait_until(&signal_word, SHMEM_CMP_EQ, 1);
  } else {
    shmem_wait_until(&signal_word, SHMEM_CMP_EQ, 1);
    shmem_put_signal(data, data, size, &signal_word, 1, SHMEM_SIGNAL_SET, next);
  }
  for (int i = 0; i < size; i++) CHECK(data[i] == 7, "put_signal: data[%d]=%llu", i, (unsigned long long)data[i]);
  shmem_barrier_all();
  free(message);
  shmem_free(data);
}

/* shmem_ptr: PE 0 stores into PE 1's static array through a pointer. PEs
 * of one host are mapped, so shmem_ptr does not return NULL there; over
 * TCP (mapped is 0) it does, and PE 0 says so, as the spec's example
 * does, and puts the values instead. */
static void ptr(int me, int mapped) {
  if (me == 0) {
    int *q = shmem_ptr(ptr_dest, 1);
    CHECK((q != NULL) == mapped, "shmem_ptr to PE 1: %p", (void *)q);
    if (q == NULL) {
      int v[4] = {1, 2, 3, 4};
      printf("can't use pointer to directly access PE 1's dest array\n");
      shmem_int_put(ptr_dest, v, 4, 1);
    } else {
      for (int i = 0; i < 4; i++) q[i] = i + 1;
    }
  }
  shmem_barrier_all();
  if (me == 1) {
    printf("PE 1 dest: %d, %d, %d, %d\n", ptr_dest[0], ptr_dest[1], ptr_dest[2], ptr_dest[3]);
    for (int i = 0; i < 4; i++) CHECK(ptr_dest[i] == i + 1, "ptr: dest[%d]=%d", i, ptr_dest[i]);
  }
}

/* shmem_fence: PE 0 puts arrays to PEs 1 and 2, fences, then a flag to
 * each; a PE that sees the flag sees the array (the spec's example has 3
 * PEs at least; with 2 the second target is PE 1 again). */
static void fence(int me, int n) {
  long ten[10];
  int flag = 99;
  for (int i = 0; i < 10; i++) ten[i] = i + 1;
  int a = 1, b = n > 2 ? 2 : 1;
  if (me == 0) {
    shmem_put(fence_dest, ten, 10, a);
    shmem_put(fence_dest, ten, 10, b);
    shmem_fence();
    shmem_put(&fence_flag, &flag, 1, a);
    shmem_put(&fence_flag, &flag, 1, b);
  }
  if (me == a || me == b) {
    shmem_int_wait_until(&fence_flag, SHMEM_CMP_EQ, 99);
    CHECK(fence_dest[0] == 1 && fence_dest[9] == 10, "fence: the flag arrived before the data: %ld", fence_dest[0]);
  }
  shmem_barrier_all();
  printf("dest[0] on PE %d is %ld\n", me, fence_dest[0]);
}

/* shmem_quiet: PE 0 puts to PEs 1 and 2, quiets, and reads both back. */
static void quiet(int me, int n) {
  int b = n > 2 ? 2 : 1;
  if (me == 0) {
    long x[3] = {0};
    int y = 0;
    shmem_put(quiet_dest, quiet_src, 3, 1);
    shmem_put(&quiet_flag, &quiet_val, 1, b);
    shmem_quiet();
    shmem_get(x, quiet_dest, 3, 1);
    shmem_get(&y, &quiet_flag, 1, b);
    printf("x: { %ld, %ld, %ld }\n", x[0], x[1], x[2]);
    printf("y: %d\n", y);
    CHECK(x[0] == 1 && x[1] == 2 && x[2] == 3 && y == 90, "quiet: x {%ld %ld %ld} y %d", x[0], x[1], x[2], y);
  }
  shmem_barrier_all();
}

int main(int argc, char **argv) {
  shmem_init();
  int mapped = !(argc > 1 && strcmp(argv[1], "tcp") == 0);
  int me = shmem_my_pe(), n = shmem_n_pes();
  CHECK(n >= 2, "the examples need 2 PEs at least");
  hello(me, n);
  put(me);
  p(me);
  g(me, n);
  iput(me);
  put_signal(me, n);
  ptr(me, mapped);
  fence(me, n);
  quiet(me, n);
  PASS("spec_rma");
  shmem_finalize();
  return 0;
}
