/* uid_unterminated.c: a unique ID whose 500-byte token has no NUL
 * (corrupted or forged in transit), placed right before an unmapped page,
 * so that reading past the field faults. aclshmemx_init_attr must refuse
 * it with ACLSHMEM_INVALID_PARAM and say why, not read past the field.
 * Prints "uid refused: <error>" when it does. */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <shmem.h>
#include <shmemx.h>

int main(void) {
  long pg = sysconf(_SC_PAGESIZE);
  char *m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED || mprotect(m + pg, pg, PROT_NONE) != 0) {
    printf("FAIL mmap\n");
    return 1;
  }
  aclshmemx_uniqueid_t *uid = (aclshmemx_uniqueid_t *)(m + pg - sizeof(aclshmemx_uniqueid_t));
  uid->version = ACLSHMEM_UNIQUEID_VERSION;
  memset(uid->internal, 'A', sizeof uid->internal); /* no terminating NUL */
  aclshmemx_init_attr_t attr;
  if (aclshmemx_set_attr_uniqueid_args(0, 2, 1 << 20, uid, &attr) != ACLSHMEM_SUCCESS) {
    printf("FAIL set_attr\n");
    return 1;
  }
  int rc = aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &attr);
  if (rc != ACLSHMEM_INVALID_PARAM) {
    printf("FAIL init_attr returned %d, want ACLSHMEM_INVALID_PARAM\n", rc);
    return 1;
  }
  printf("uid refused: %s\n", shmemx_last_error());
  return 0;
}
