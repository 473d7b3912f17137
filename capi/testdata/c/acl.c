/* acl.c: CANN SHMEM's start-up. Run as "acl RANK NPES" for rank 0, which
 * prints the unique ID on a line "UID <token>" for the test to hand to the
 * others, run as "acl RANK NPES TOKEN". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <shmemx.h>

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  int rank = atoi(argv[1]), npes = atoi(argv[2]);
  aclshmemx_uniqueid_t uid = ACLSHMEM_UNIQUEID_INITIALIZER;
  /* ACL_TEST_TLS=off: every rank turns TLS off before start-up, as CANN
   * SHMEM programs do with aclshmemx_set_conf_store_tls(false, ...). */
  const char *tls = getenv("ACL_TEST_TLS");
  if (tls && strcmp(tls, "off") == 0 && aclshmemx_set_conf_store_tls(false, NULL, 0) != ACLSHMEM_SUCCESS) {
    printf("FAIL set_conf_store_tls before init: %s\n", shmemx_last_error());
    return 1;
  }
  if (rank == 0) {
    if (aclshmemx_get_uniqueid(&uid) != ACLSHMEM_SUCCESS) {
      printf("FAIL get_uniqueid: %s\n", shmemx_last_error());
      return 1;
    }
    printf("UID %s\n", uid.internal);
    fflush(stdout);
  } else {
    if (argc < 4) return 2;
    strncpy(uid.internal, argv[3], sizeof uid.internal - 1);
  }
  aclshmemx_init_attr_t attr;
  if (aclshmemx_set_attr_uniqueid_args(rank, npes, 8 << 20, &uid, &attr) != ACLSHMEM_SUCCESS) {
    printf("FAIL set_attr\n");
    return 1;
  }
  if (aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &attr) != ACLSHMEM_SUCCESS) {
    printf("FAIL init_attr: %s\n", shmemx_last_error());
    return 1;
  }
  /* TLS is fixed once the world runs */
  if (aclshmemx_set_conf_store_tls(false, NULL, 0) == ACLSHMEM_SUCCESS) {
    printf("FAIL set_conf_store_tls accepted after init\n");
    return 1;
  }
  int me = aclshmem_my_pe(), n = aclshmem_n_pes();
  long *x = aclshmem_malloc(sizeof(long));
  *x = -1;
  aclshmem_barrier_all();
  shmem_long_p(x, me, (me + 1) % n);
  aclshmem_barrier_all();
  if (me != rank || n != npes || *x != (me + n - 1) % n) {
    printf("FAIL PE %d of %d got %ld\n", me, n, *x);
    return 1;
  }
  printf("acl ok PE %d of %d\n", me, n);
  aclshmem_free(x);
  return aclshmem_finalize();
}
