/*
 * shmem.h: the OpenSHMEM 1.5 C API of goshmem (libgoshmem).
 *
 * Symmetric objects are those returned by shmem_malloc and its kin and the
 * program's global and static variables: an address inside them names the
 * same object on every PE (statics on every host; see README "For C users"
 * for how they are shared and what each transport needs).
 * Errors: calls with a return code return nonzero; the others abort the
 * program with a message naming the call (shmemx.h can change that).
 */
#ifndef GOSHMEM_SHMEM_H
#define GOSHMEM_SHMEM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SHMEM_MAJOR_VERSION 1
#define SHMEM_MINOR_VERSION 5
#define SHMEM_MAX_NAME_LEN 256
#define SHMEM_VENDOR_STRING "goshmem"
#define _SHMEM_MAJOR_VERSION SHMEM_MAJOR_VERSION
#define _SHMEM_MINOR_VERSION SHMEM_MINOR_VERSION
#define _SHMEM_MAX_NAME_LEN SHMEM_MAX_NAME_LEN
#define _SHMEM_VENDOR_STRING SHMEM_VENDOR_STRING

#define SHMEM_THREAD_SINGLE 0
#define SHMEM_THREAD_FUNNELED 1
#define SHMEM_THREAD_SERIALIZED 2
#define SHMEM_THREAD_MULTIPLE 3

/* The values of goshmem's Cmp and SignalOp. */
#define SHMEM_CMP_EQ 1
#define SHMEM_CMP_NE 2
#define SHMEM_CMP_GT 3
#define SHMEM_CMP_GE 4
#define SHMEM_CMP_LT 5
#define SHMEM_CMP_LE 6
#define _SHMEM_CMP_EQ SHMEM_CMP_EQ
#define _SHMEM_CMP_NE SHMEM_CMP_NE
#define _SHMEM_CMP_GT SHMEM_CMP_GT
#define _SHMEM_CMP_GE SHMEM_CMP_GE
#define _SHMEM_CMP_LT SHMEM_CMP_LT
#define _SHMEM_CMP_LE SHMEM_CMP_LE
#define SHMEM_SIGNAL_SET 1
#define SHMEM_SIGNAL_ADD 2

#define SHMEM_CTX_PRIVATE 1
#define SHMEM_CTX_SERIALIZED 2
#define SHMEM_CTX_NOSTORE 4
#define SHMEM_MALLOC_ATOMICS_REMOTE 1
#define SHMEM_MALLOC_SIGNAL_REMOTE 2
#define SHMEM_TEAM_NUM_CONTEXTS 1

/* pSync and pWrk are accepted and not used: goshmem synchronizes the
 * active-set routines itself. The sizes keep programs that declare them
 * compiling. */
#define SHMEM_SYNC_VALUE 0L
#define SHMEM_SYNC_SIZE 64
#define SHMEM_BCAST_SYNC_SIZE SHMEM_SYNC_SIZE
#define SHMEM_BARRIER_SYNC_SIZE SHMEM_SYNC_SIZE
#define SHMEM_COLLECT_SYNC_SIZE SHMEM_SYNC_SIZE
#define SHMEM_REDUCE_SYNC_SIZE SHMEM_SYNC_SIZE
#define SHMEM_ALLTOALL_SYNC_SIZE SHMEM_SYNC_SIZE
#define SHMEM_ALLTOALLS_SYNC_SIZE SHMEM_SYNC_SIZE
#define SHMEM_REDUCE_MIN_WRKDATA_SIZE 1
#define _SHMEM_SYNC_VALUE SHMEM_SYNC_VALUE
#define _SHMEM_BCAST_SYNC_SIZE SHMEM_BCAST_SYNC_SIZE
#define _SHMEM_BARRIER_SYNC_SIZE SHMEM_BARRIER_SYNC_SIZE
#define _SHMEM_COLLECT_SYNC_SIZE SHMEM_COLLECT_SYNC_SIZE
#define _SHMEM_REDUCE_SYNC_SIZE SHMEM_REDUCE_SYNC_SIZE
#define _SHMEM_REDUCE_MIN_WRKDATA_SIZE SHMEM_REDUCE_MIN_WRKDATA_SIZE

/* Contexts and teams are handles into tables the library keeps. */
typedef struct goshmem_ctx *shmem_ctx_t;
typedef struct goshmem_team *shmem_team_t;
#define SHMEM_CTX_INVALID ((shmem_ctx_t)0)
#define SHMEM_CTX_DEFAULT ((shmem_ctx_t)1)
#define SHMEM_TEAM_INVALID ((shmem_team_t)0)
#define SHMEM_TEAM_WORLD ((shmem_team_t)1)
#define SHMEM_TEAM_SHARED ((shmem_team_t)2)

typedef struct {
  int num_contexts;
} shmem_team_config_t;

/* Library setup, exit and query */
void shmem_init(void);
int shmem_init_thread(int requested, int *provided);
void shmem_query_thread(int *provided);
void shmem_finalize(void);
void shmem_global_exit(int status);
int shmem_my_pe(void);
int shmem_n_pes(void);
int shmem_pe_accessible(int pe);
int shmem_addr_accessible(const void *addr, int pe);
void *shmem_ptr(const void *dest, int pe);
void shmem_info_get_version(int *major, int *minor);
void shmem_info_get_name(char *name);
void start_pes(int npes);
int _my_pe(void);
int _num_pes(void);
int my_pe(void);
int num_pes(void);
void shmem_pcontrol(const int level, ...);

/* Memory management (collective) */
void *shmem_malloc(size_t size);
void *shmem_malloc_with_hints(size_t size, long hints);
void *shmem_calloc(size_t count, size_t size);
void *shmem_align(size_t alignment, size_t size);
void *shmem_realloc(void *ptr, size_t size);
void shmem_free(void *ptr);

/* Ordering, completion and synchronization */
void shmem_fence(void);
void shmem_quiet(void);
void shmem_ctx_fence(shmem_ctx_t ctx);
void shmem_ctx_quiet(shmem_ctx_t ctx);
void shmem_barrier_all(void);
void shmem_sync_all(void);
void shmem_barrier(int PE_start, int logPE_stride, int PE_size, long *pSync);

/* Signals */
uint64_t shmem_signal_fetch(const uint64_t *sig_addr);
uint64_t shmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value);

/* Locks */
void shmem_set_lock(long *lock);
void shmem_clear_lock(long *lock);
int shmem_test_lock(long *lock);

/* Contexts */
int shmem_ctx_create(long options, shmem_ctx_t *ctx);
void shmem_ctx_destroy(shmem_ctx_t ctx);
int shmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t *team);

/* Teams */
int shmem_team_my_pe(shmem_team_t team);
int shmem_team_n_pes(shmem_team_t team);
int shmem_team_get_config(shmem_team_t team, long config_mask, shmem_team_config_t *config);
int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team);
/* OpenSHMEM 1.6: shmem_ptr with pe numbered in team (NULL for SHMEM_TEAM_INVALID or a non-member). */
void *shmem_team_ptr(shmem_team_t team, const void *dest, int pe);
int shmem_team_split_strided(shmem_team_t parent_team, int start, int stride, int size,
                             const shmem_team_config_t *config, long config_mask, shmem_team_t *new_team);
int shmem_team_split_2d(shmem_team_t parent_team, int xrange, const shmem_team_config_t *xaxis_config,
                        long xaxis_mask, shmem_team_t *xaxis_team, const shmem_team_config_t *yaxis_config,
                        long yaxis_mask, shmem_team_t *yaxis_team);
int shmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t *ctx);
int shmem_team_sync(shmem_team_t team);
void shmem_team_destroy(shmem_team_t team);

/* Collectives on teams, untyped */
int shmem_broadcastmem(shmem_team_t team, void *dest, const void *source, size_t nelems, int PE_root);
int shmem_collectmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
int shmem_fcollectmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
int shmem_alltoallmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
int shmem_alltoallsmem(shmem_team_t team, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems);

/* Active-set collectives (deprecated in 1.5, still specified) */
void shmem_broadcast32(void *dest, const void *source, size_t nelems, int PE_root, int PE_start, int logPE_stride, int PE_size, long *pSync);
void shmem_broadcast64(void *dest, const void *source, size_t nelems, int PE_root, int PE_start, int logPE_stride, int PE_size, long *pSync);
void shmem_collect32(void *dest, const void *source, size_t nelems, int PE_start, int logPE_stride, int PE_size, long *pSync);
void shmem_collect64(void *dest, const void *source, size_t nelems, int PE_start, int logPE_stride, int PE_size, long *pSync);
void shmem_fcollect32(void *dest, const void *source, size_t nelems, int PE_start, int logPE_stride, int PE_size, long *pSync);
void shmem_fcollect64(void *dest, const void *source, size_t nelems, int PE_start, int logPE_stride, int PE_size, long *pSync);
void shmem_alltoall32(void *dest, const void *source, size_t nelems, int PE_start, int logPE_stride, int PE_size, long *pSync);
void shmem_alltoall64(void *dest, const void *source, size_t nelems, int PE_start, int logPE_stride, int PE_size, long *pSync);
void shmem_alltoalls32(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int PE_start, int logPE_stride, int PE_size, long *pSync);
void shmem_alltoalls64(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int PE_start, int logPE_stride, int PE_size, long *pSync);

/* Deprecated untyped point-to-point synchronization (long) */
void shmem_wait(long *ivar, long cmp_value);
void shmem_wait_until(long *ivar, int cmp, long cmp_value);

/* Used by the C11 generic names for an argument type without a routine. */
void gs_no_such_type(void);

#include "shmem_gen.h"

/* shmem_sync: shmem_sync(team) in C11, shmem_sync(PE_start, logPE_stride,
 * PE_size, pSync) for the deprecated active-set form; told apart by the
 * number of arguments. */
void shmem_sync(int PE_start, int logPE_stride, int PE_size, long *pSync);
#define GS_SYNC_SELECT(a, b, c, d, name, ...) name
#define shmem_sync(...) GS_SYNC_SELECT(__VA_ARGS__, (shmem_sync), gs_no_such_type, gs_no_such_type, shmem_team_sync, gs_no_such_type)(__VA_ARGS__)
#define GS_ARG1(...) GS_ARG1_(__VA_ARGS__, 0)
#define GS_ARG1_(a, ...) (a)
#define GS_ARG2(...) GS_ARG2_(__VA_ARGS__, 0)
#define GS_ARG2_(a, b, ...) (b)

#ifdef __cplusplus
}
#endif
#endif
