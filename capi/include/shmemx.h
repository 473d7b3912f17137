/*
 * shmemx.h: goshmem's extensions to the OpenSHMEM C API, and CANN SHMEM's
 * host start-up names (aclshmem*) for programs written against CANN SHMEM.
 */
#ifndef GOSHMEM_SHMEMX_H
#define GOSHMEM_SHMEMX_H

#include <stdbool.h>
#include <stdint.h>
#include "shmem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* goshmem's error text for the last failed call ("" if none): the call's
 * name, then goshmem's error (which names the PEs involved). The string
 * stays valid for the life of the program. */
const char *shmemx_last_error(void);

/* By default a call without a return code that fails ends the program
 * with a message naming it (SHMEMX_ERRORS_ABORT). SHMEMX_ERRORS_RETURN
 * makes such calls return instead; shmemx_last_error then says what
 * failed. */
#define SHMEMX_ERRORS_ABORT 0
#define SHMEMX_ERRORS_RETURN 1
void shmemx_set_error_mode(int mode);

/* CANN SHMEM start-up: PE 0 makes a unique ID and hands it to the others
 * by any means; every PE then initializes with its rank and the size. */
#define ACLSHMEM_SUCCESS 0
#define ACLSHMEM_INVALID_PARAM (-1)
#define ACLSHMEM_INNER_ERROR (-2)
#define ACLSHMEM_UNIQUEID_VERSION 1

typedef struct {
  int32_t version;
  int32_t my_pe;
  int32_t n_pes;
  char internal[500]; /* goshmem's unique ID token, NUL-terminated */
} aclshmemx_uniqueid_t;

#define ACLSHMEM_UNIQUEID_INITIALIZER {ACLSHMEM_UNIQUEID_VERSION, 0, 0, {0}}

typedef struct {
  int my_pe;
  int n_pes;
  int64_t local_mem_size; /* symmetric heap bytes per PE, as shmem_malloc sees it */
  void *comm_args;        /* the aclshmemx_uniqueid_t, set by aclshmemx_set_attr_uniqueid_args */
} aclshmemx_init_attr_t;

typedef enum {
  ACLSHMEMX_INIT_WITH_DEFAULT = 0,
  ACLSHMEMX_INIT_WITH_MPI = 1,
  ACLSHMEMX_INIT_WITH_UNIQUEID = 2,
} aclshmemx_bootstrap_t;

int aclshmemx_get_uniqueid(aclshmemx_uniqueid_t *uid);
int aclshmemx_set_attr_uniqueid_args(int my_pe, int n_pes, int64_t local_mem_size, aclshmemx_uniqueid_t *uid,
                                     aclshmemx_init_attr_t *attr);
int aclshmemx_init_attr(aclshmemx_bootstrap_t flag, aclshmemx_init_attr_t *attr);
/* TLS of the start-up and of every connection. Before init only.
 * enable false: no TLS (goshmem logs a warning). enable true with empty
 * info: goshmem's default, credentials derived from the unique ID's job
 * secret. info "ca=FILE;cert=FILE;key=FILE[;crl=FILE]": that PKI. */
int aclshmemx_set_conf_store_tls(bool enable, const char *tls_info, const uint32_t tls_info_len);
void *aclshmem_malloc(size_t size);
void *aclshmem_calloc(size_t nmemb, size_t size);
void *aclshmem_align(size_t alignment, size_t size);
void aclshmem_free(void *ptr);
int aclshmem_finalize(void);
int aclshmem_my_pe(void);
int aclshmem_n_pes(void);
void aclshmem_barrier_all(void);

#ifdef __cplusplus
}
#endif
#endif
