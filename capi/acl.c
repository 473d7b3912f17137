/* acl.c: CANN SHMEM's start-up names (shmemx.h) over goshmem's unique ID. */
#include <stdio.h>
#include <string.h>
#include "gs.h"
#include "shmemx.h"
#include "_cgo_export.h"

int aclshmemx_get_uniqueid(aclshmemx_uniqueid_t *uid) {
  if (!uid) return ACLSHMEM_INVALID_PARAM;
  memset(uid, 0, sizeof *uid);
  uid->version = ACLSHMEM_UNIQUEID_VERSION;
  return goshmem_acl_get_uniqueid(uid->internal, sizeof uid->internal) == 0 ? ACLSHMEM_SUCCESS : ACLSHMEM_INNER_ERROR;
}

int aclshmemx_set_attr_uniqueid_args(int my_pe, int n_pes, int64_t local_mem_size, aclshmemx_uniqueid_t *uid,
                                     aclshmemx_init_attr_t *attr) {
  if (!uid || !attr || n_pes < 1 || my_pe < 0 || my_pe >= n_pes || local_mem_size < 0 ||
      uid->version != ACLSHMEM_UNIQUEID_VERSION)
    return ACLSHMEM_INVALID_PARAM;
  uid->my_pe = my_pe;
  uid->n_pes = n_pes;
  attr->my_pe = my_pe;
  attr->n_pes = n_pes;
  attr->local_mem_size = local_mem_size;
  attr->comm_args = uid;
  return ACLSHMEM_SUCCESS;
}

int aclshmemx_init_attr(aclshmemx_bootstrap_t flag, aclshmemx_init_attr_t *attr) {
  if (flag == ACLSHMEMX_INIT_WITH_UNIQUEID) {
    if (!attr || !attr->comm_args) return ACLSHMEM_INVALID_PARAM;
    aclshmemx_uniqueid_t *uid = attr->comm_args;
    if (goshmem_acl_set_uid(uid->internal, sizeof uid->internal, attr->my_pe, attr->n_pes, attr->local_mem_size) != 0)
      return ACLSHMEM_INVALID_PARAM;
  } else if (flag != ACLSHMEMX_INIT_WITH_DEFAULT) {
    return ACLSHMEM_INVALID_PARAM; /* no MPI bootstrap: use the unique ID or a launcher */
  }
  if (goshmem_init("aclshmemx_init_attr") != 0) return ACLSHMEM_INNER_ERROR;
  gs_finalize_at_exit();
  return ACLSHMEM_SUCCESS;
}

int aclshmemx_set_conf_store_tls(bool enable, const char *tls_info, const uint32_t tls_info_len) {
  return goshmem_acl_set_tls(enable, (char *)tls_info, tls_info_len) == 0 ? ACLSHMEM_SUCCESS : ACLSHMEM_INVALID_PARAM;
}

/* Each entry point names itself in its errors (gs_malloc and kin), not
 * the shmem_* routine it shares its work with. */
void *aclshmem_malloc(size_t size) { return gs_malloc("aclshmem_malloc", size); }
void *aclshmem_calloc(size_t nmemb, size_t size) { return gs_calloc("aclshmem_calloc", nmemb, size); }
void *aclshmem_align(size_t alignment, size_t size) { return gs_align("aclshmem_align", alignment, size); }
void aclshmem_free(void *ptr) { gs_free("aclshmem_free", ptr); }
int aclshmem_finalize(void) {
  fflush(NULL);
  goshmem_finalize("aclshmem_finalize");
  return ACLSHMEM_SUCCESS;
}
int aclshmem_my_pe(void) { return shmem_my_pe(); }
int aclshmem_n_pes(void) { return shmem_n_pes(); }
void aclshmem_barrier_all(void) {
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  goshmem_barrier_all("aclshmem_barrier_all", 0);
}
