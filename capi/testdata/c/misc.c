/* misc.c: memory management, locks, contexts, queries. */
#include <string.h>
#include <mpp/shmemx.h> /* the older path, which shmemx.h's programs still use */
#include <stdint.h>
#include "check.h"

int main(void) {
  int provided = -1;
  CHECK(shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided) == 0 && provided == SHMEM_THREAD_MULTIPLE, "init_thread");
  int me = shmem_my_pe(), n = shmem_n_pes();
  int major, minor;
  char name[SHMEM_MAX_NAME_LEN];
  shmem_info_get_version(&major, &minor);
  shmem_info_get_name(name);
  CHECK(major == 1 && minor == 5 && strcmp(name, "goshmem") == 0, "info");
  CHECK(shmem_pe_accessible((me + 1) % n), "accessible");

  char *a = shmem_align(4096, 100);
  CHECK(((uintptr_t)a & 4095) == 0, "align");
  int *z = shmem_calloc(1000, sizeof(int));
  for (int k = 0; k < 1000; k++) CHECK(z[k] == 0, "calloc");
  z[999] = 7;
  z = shmem_realloc(z, 4000 * sizeof(int));
  CHECK(z[999] == 7, "realloc keeps contents");
  CHECK(shmem_malloc(0) == NULL, "malloc(0)");
  CHECK(shmem_malloc((size_t)1 << 40) == NULL, "out of memory is NULL");
  /* Sizes within 15 of SIZE_MAX must not round up to a small block that
   * overlaps the next allocation. */
  CHECK(shmem_malloc(SIZE_MAX - 8) == NULL && shmem_calloc(SIZE_MAX - 3, 1) == NULL, "sizes that wrap are NULL");
  CHECK(shmem_align(3, 16) == NULL && strstr(shmemx_last_error(), "shmem_align: ") && strstr(shmemx_last_error(), "power of two"),
        "bad alignment: %s", shmemx_last_error());
  /* PEs that ask for different sizes all get NULL and the reason, not
   * different addresses */
  shmemx_set_error_mode(SHMEMX_ERRORS_RETURN);
  void *bad = shmem_malloc(me == 0 ? 64 : 128);
  CHECK(n == 1 || (bad == NULL && strstr(shmemx_last_error(), "shmem_malloc: ") && strstr(shmemx_last_error(), "disagree")),
        "mismatched malloc: %p %s", bad, shmemx_last_error());
  if (n == 1) shmem_free(bad);
  /* A pointer that is not a live block names the mistake on the PE that
   * made it, not only the disagreement the others see. */
  static long not_heap;
  shmem_free(me == 0 ? (void *)&not_heap : (void *)a);
  CHECK(me != 0 || strstr(shmemx_last_error(), "was not returned by shmem_malloc"), "free of a static: %s", shmemx_last_error());
  shmemx_set_error_mode(SHMEMX_ERRORS_ABORT);

  long *lock = shmem_calloc(1, sizeof(long));
  long *count = shmem_calloc(1, sizeof(long));
  for (int k = 0; k < 20; k++) {
    shmem_set_lock(lock);
    long c = shmem_long_g(count, 0); /* read-modify-write under the lock */
    shmem_long_p(count, c + 1, 0);
    shmem_quiet();
    shmem_clear_lock(lock);
  }
  shmem_barrier_all();
  if (me == 0) CHECK(*count == 20L * n, "lock count %ld", *count);
  shmem_barrier_all(); /* PE 0 has read count before anyone writes it again */
  while (shmem_test_lock(lock)) {
  }
  shmem_clear_lock(lock);

  shmem_ctx_t ctx;
  CHECK(shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) == 0, "ctx_create");
  shmem_ctx_long_p(ctx, count, me, (me + 1) % n);
  shmem_ctx_quiet(ctx);
  shmem_ctx_fence(ctx);
  shmem_ctx_destroy(ctx);
  shmem_barrier_all();
  CHECK(*count == (me + n - 1) % n, "ctx put %ld", *count);
  shmem_sync_all();
  shmem_free(count);
  shmem_free(lock);
  shmem_free(z);
  shmem_free(a);
  PASS("misc");
  shmem_finalize();
  return 0;
}
