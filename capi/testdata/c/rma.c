/* rma.c: puts and gets of every kind, to the next PE, checked there. */
#include "check.h"

int main(void) {
  shmem_init();
  int me = shmem_my_pe(), n = shmem_n_pes(), next = (me + 1) % n, prev = (me + n - 1) % n;
  long *l = shmem_calloc(16, sizeof(long));
  int *i4 = shmem_calloc(16, sizeof(int));
  double *d = shmem_calloc(8, sizeof(double));
  short *s = shmem_calloc(8, sizeof(short));
  char *bytes = shmem_calloc(64, 1);
  long src[16];
  for (int k = 0; k < 16; k++) src[k] = me * 100 + k;

  shmem_long_put(l, src, 4, next);                 /* typed */
  shmem_put(l + 4, src + 4, 2, next);               /* C11 generic */
  shmem_put(SHMEM_CTX_DEFAULT, l + 6, src + 6, 1, next); /* generic with a context */
  shmem_long_put_nbi(l + 7, src + 7, 1, next);
  shmem_int_p(i4, me + 7, next);
  shmem_p(d, me + 0.5, next);
  int spaced[5] = {1, -1, 2, -1, 3};
  shmem_iput(i4 + 2, spaced, 2, 2, 3, next); /* i4[2,4,6] = 1,2,3 */
  shmem_put64(l + 8, src + 8, 2, next);
  shmem_putmem(bytes, "hello", 6, next);
  shmem_put128(l + 10, src + 10, 1, next);            /* 16 bytes: l[10], l[11] */
  shmem_iput64(l + 12, src + 12, 2, 1, 2, next);      /* l[12], l[14] = src[12], src[13] */
  short three[3] = {(short)me, 2, 3};
  shmem_short_put(s, three, 3, next);
  shmem_quiet();
  shmem_barrier_all();

  for (int k = 0; k < 12; k++) CHECK(l[k] == prev * 100 + k, "l[%d]=%ld", k, l[k]);
  CHECK(l[12] == prev * 100 + 12 && l[14] == prev * 100 + 13 && l[13] == 0, "iput64");
  CHECK(i4[0] == prev + 7, "p: %d", i4[0]);
  CHECK(i4[2] == 1 && i4[4] == 2 && i4[6] == 3 && i4[3] == 0, "iput: %d %d %d %d", i4[2], i4[4], i4[6], i4[3]);
  CHECK(d[0] == prev + 0.5, "double p: %f", d[0]);
  CHECK(bytes[0] == 'h' && bytes[4] == 'o', "putmem");
  CHECK(s[0] == prev && s[2] == 3, "short put");

  /* gets from the next PE, which holds values written by me */
  long g[4] = {0};
  shmem_long_get(g, l, 2, next);
  CHECK(g[0] == me * 100 && g[1] == me * 100 + 1, "get %ld %ld", g[0], g[1]);
  shmem_get_nbi(g + 2, l + 2, 2, next);
  shmem_quiet();
  CHECK(g[2] == me * 100 + 2 && g[3] == me * 100 + 3, "get_nbi");
  CHECK(shmem_long_g(l + 5, next) == me * 100 + 5, "g");
  CHECK(shmem_g(i4, next) == me + 7, "generic g");
  int strided[3];
  shmem_int_iget(strided, i4 + 2, 1, 2, 3, next);
  CHECK(strided[0] == 1 && strided[1] == 2 && strided[2] == 3, "iget");
  long two[2];
  shmem_get64(two, l + 8, 2, next);
  CHECK(two[1] == me * 100 + 9, "get64");
  char hello[6];
  shmem_getmem(hello, bytes, 6, next);
  CHECK(hello[1] == 'e', "getmem");
  /* a shmem_ptr to a peer on this host is a plain pointer */
  long *peer = shmem_ptr(l, next);
  if (peer) CHECK(peer[0] == me * 100, "shmem_ptr");
  CHECK(shmem_addr_accessible(l, next) && !shmem_addr_accessible(src, next), "addr_accessible");
  shmem_barrier_all();
  PASS("rma");
  shmem_free(bytes);
  shmem_free(s);
  shmem_free(d);
  shmem_free(i4);
  shmem_free(l);
  shmem_finalize();
  return 0;
}
