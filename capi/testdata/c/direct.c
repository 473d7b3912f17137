/* direct.c: RMA, atomics, put-with-signal, strided puts and quiet/fence to
 * every peer, then a look at libgoshmem's internal flag gs_go_rma (not
 * API: looked up here for this test alone), which the Go fallback of every
 * RMA and atomic sets. Between PEs of one host it must still be 0: none of
 * these calls went into Go. With the argument "network" (TCP forced, no
 * peer mapped) it must be 1, which shows the flag does record the Go path.
 * The flag is found with dlsym on the library's handle: an `extern int`
 * here would be a copy in the program (a copy relocation) that the
 * library, which addresses its own, never writes. */
#include <dlfcn.h>
#include <string.h>
#include "check.h"

int main(int argc, char **argv) {
  int want_go = argc > 1 && strcmp(argv[1], "network") == 0;
  shmem_init();
  int me = shmem_my_pe(), n = shmem_n_pes();
  long *l = shmem_calloc(4 * n, sizeof(long));
  int *i4 = shmem_calloc(4 * n, sizeof(int));
  double *d = shmem_calloc(n, sizeof(double));
  uint64_t *sig = shmem_calloc(n, sizeof(uint64_t));
  CHECK(l && i4 && d && sig, "allocation");
  shmem_barrier_all();
  for (int pe = 0; pe < n; pe++) {
    long v[2] = {me, me + 1};
    shmem_long_put(&l[2 * me], v, 2, pe);
    shmem_putmem_nbi(&i4[me], &me, sizeof me, pe);
    shmem_double_p(&d[me], me + 0.5, pe);
    shmem_int_atomic_add(&i4[n + me], me + 1, pe);
    (void)shmem_long_atomic_fetch_add(&l[2 * n + me], 1, pe);
    (void)shmem_long_atomic_compare_swap(&l[3 * n + me], 0, me + 7, pe);
    shmem_uint64_atomic_set(&sig[me], 1, pe);
    shmem_fence();
    shmem_int_iput(&i4[2 * n], &me, 1, 1, 1, pe);
    shmem_long_put_signal(&l[2 * me], v, 2, &sig[me], 2, SHMEM_SIGNAL_SET, pe);
  }
  shmem_quiet();
  long back[2];
  for (int pe = 0; pe < n; pe++) {
    shmem_long_get(back, &l[2 * me], 2, pe);
    CHECK(back[0] == me && back[1] == me + 1, "get from PE %d: %ld %ld", pe, back[0], back[1]);
    CHECK(shmem_int_g(&i4[me], pe) == me, "g from PE %d", pe);
    CHECK(shmem_long_atomic_fetch(&l[3 * n + me], pe) == me + 7, "atomic fetch from PE %d", pe);
  }
  shmem_barrier_all();
  for (int pe = 0; pe < n; pe++)
    CHECK(d[pe] == pe + 0.5 && i4[n + pe] == pe + 1 && l[2 * n + pe] == 1 && sig[pe] == 2,
          "from PE %d: %f %d %ld %llu", pe, d[pe], i4[n + pe], l[2 * n + pe], (unsigned long long)sig[pe]);
  void *lib = dlopen("libgoshmem.so", RTLD_NOW | RTLD_NOLOAD);
  int *go_rma = lib ? dlsym(lib, "gs_go_rma") : NULL;
  CHECK(go_rma != NULL, "no gs_go_rma in libgoshmem.so: %s", dlerror());
  CHECK(*go_rma == want_go, "gs_go_rma is %d, want %d: %s", *go_rma, want_go,
        want_go ? "the Go path was not recorded" : "a call to a mapped peer went into Go");
  PASS("direct");
  shmem_finalize();
  return 0;
}
