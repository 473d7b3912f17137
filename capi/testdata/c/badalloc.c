/* badalloc.c: allocations the library refuses return NULL and leave a
 * last error that starts with the entry point the program called and says
 * why: a calloc whose count*size overflows size_t (which left the last
 * error empty) and, for the aclshmem_* entry points, every refusal (which
 * named the shmem_* routine behind them). Every PE makes the same calls,
 * as the allocation routines are collective; after the refusals the heap
 * still hands out zeroed memory. */
#include <stdint.h>
#include "refused.h"

/* refused_first: the error starts with "call:", so "aclshmem_malloc" is
 * not satisfied by "shmem_malloc: ...". */
static void refused_first(const char *call, const char *want) {
  const char *e = shmemx_last_error();
  size_t n = strlen(call);
  CHECK(e && strncmp(e, call, n) == 0 && e[n] == ':', "%s: last error \"%s\", want it to start with \"%s:\"", call, e ? e : "", call);
  refused_as(call, want);
}

int main(void) {
  shmem_init();
  shmemx_set_error_mode(SHMEMX_ERRORS_RETURN);
  const size_t big = (size_t)1 << 40; /* more than any test heap */
  const size_t half = SIZE_MAX / 2 + 1;
  char want[128];

  CHECK(shmem_calloc(half, 4) == NULL, "shmem_calloc(%zu, 4) did not return NULL", half);
  snprintf(want, sizeof want, "count %zu times size 4 overflows", half);
  refused_first("shmem_calloc", want);

  CHECK(aclshmem_calloc(4, half) == NULL, "aclshmem_calloc(4, %zu) did not return NULL", half);
  snprintf(want, sizeof want, "count 4 times size %zu overflows", half);
  refused_first("aclshmem_calloc", want);

  CHECK(aclshmem_malloc(big) == NULL, "aclshmem_malloc(%zu) did not return NULL", big);
  refused_first("aclshmem_malloc", "out of symmetric memory");

  CHECK(aclshmem_align(64, big) == NULL, "aclshmem_align(64, %zu) did not return NULL", big);
  refused_first("aclshmem_align", "out of symmetric memory");

  CHECK(aclshmem_align(48, 64) == NULL, "aclshmem_align(48, 64) did not return NULL");
  refused_first("aclshmem_align", "alignment 48 is not a power of two");

  CHECK(shmem_realloc(NULL, big) == NULL, "shmem_realloc(NULL, %zu) did not return NULL", big);
  refused_first("shmem_realloc", "out of symmetric memory");

  long *x = aclshmem_calloc(4, sizeof(long));
  CHECK(x != NULL, "aclshmem_calloc(4, %zu): %s", sizeof(long), shmemx_last_error());
  aclshmem_free((char *)x + 8); /* not what the allocation returned */
  refused_first("aclshmem_free", "was not returned by shmem_malloc");

  for (int i = 0; i < 4; i++) CHECK(x[i] == 0, "word %d of calloc memory is %ld", i, x[i]);
  x[0] = shmem_my_pe() + 1;
  aclshmem_barrier_all();
  long got = shmem_long_g(x, (shmem_my_pe() + 1) % shmem_n_pes());
  CHECK(got == (shmem_my_pe() + 1) % shmem_n_pes() + 1, "read %ld from the next PE", got);
  aclshmem_barrier_all();
  aclshmem_free(x);
  PASS("badalloc");
  return aclshmem_finalize();
}
