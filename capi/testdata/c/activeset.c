/* activeset.c: the deprecated active-set routines, on all PEs and on the
 * even PEs (PE_start 0, logPE_stride 1). */
#include "check.h"

static long pSync[SHMEM_REDUCE_SYNC_SIZE];
static long pWrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE];

int main(void) {
  shmem_init();
  int me = shmem_my_pe(), n = shmem_n_pes();
  long *src = shmem_malloc(4 * sizeof(long));
  long *dst = shmem_calloc(4 * n, sizeof(long));
  int *isrc = shmem_malloc(2 * sizeof(int)), *idst = shmem_calloc(2 * n, sizeof(int));
  for (int k = 0; k < 4; k++) src[k] = me * 10 + k;
  isrc[0] = me;
  isrc[1] = -me;
  shmem_barrier_all();

  shmem_barrier(0, 0, n, pSync);
  shmem_broadcast64(dst, src, 4, 0, 0, 0, n, pSync);
  if (me != 0) CHECK(dst[2] == 2, "broadcast64 %ld", dst[2]);
  shmem_fcollect64(dst, src, 1, 0, 0, n, pSync);
  for (int p = 0; p < n; p++) CHECK(dst[p] == p * 10, "fcollect64[%d]", p);
  shmem_collect32(idst, isrc, me % 2 + 1, 0, 0, n, pSync);
  int off = 0;
  for (int p = 0; p < n; p++) {
    CHECK(idst[off] == p, "collect32 from %d", p);
    off += p % 2 + 1;
  }
  shmem_long_sum_to_all(dst, src, 4, 0, 0, n, pWrk, pSync);
  CHECK(dst[1] == 10L * n * (n - 1) / 2 + n, "sum_to_all %ld", dst[1]);
  shmem_int_max_to_all(idst, isrc, 2, 0, 0, n, (int *)pWrk, pSync);
  CHECK(idst[0] == n - 1 && idst[1] == 0, "max_to_all");
  shmem_long_sum_to_all(src, src, 1, 0, 0, n, pWrk, pSync); /* in place */
  CHECK(src[0] == 10L * n * (n - 1) / 2, "in-place sum %ld", src[0]);
  long *a = shmem_malloc(n * sizeof(long));
  for (int p = 0; p < n; p++) a[p] = me * 100 + p;
  shmem_barrier_all();
  shmem_alltoall64(dst, a, 1, 0, 0, n, pSync);
  for (int p = 0; p < n; p++) CHECK(dst[p] == p * 100 + me, "alltoall64[%d]", p);
  /* the even PEs only */
  if (me % 2 == 0) {
    int size = (n + 1) / 2;
    shmem_barrier(0, 1, size, pSync);
    shmem_long_max_to_all(dst, src + 1, 1, 0, 1, size, pWrk, pSync);
    (void)dst;
    shmem_sync(0, 1, size, pSync);
  }
  shmem_barrier_all();
  PASS("activeset");
  shmem_finalize();
  return 0;
}
