/* api.c: the routines of shmem.h that are not per type. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gs.h"
#include "_cgo_export.h"

#undef shmem_sync
#undef shmem_wait_until

#define OP(s) ((char *)(s))

static int gs_thread_level = SHMEM_THREAD_MULTIPLE;

/* stdout is line-buffered from the start, even into shmemrun's pipe: a PE
 * can be ended abruptly (another PE's shmem_global_exit, a failed peer,
 * shmemrun stopping the job), and what it printed before must not be lost
 * in a stdio buffer. Runs when the library loads, before main writes. */
__attribute__((constructor)) static void gs_line_buffered_stdout(void) { setvbuf(stdout, NULL, _IOLBF, BUFSIZ); }

void shmem_init(void) {
  if (goshmem_init(OP("shmem_init")) != 0) {
    /* shmem_init has no return code: say why, as C users expect, and stop. */
    fprintf(stderr, "goshmem: %s\n", goshmem_last_error());
    gs_die("", 1);
  }
  gs_finalize_at_exit();
}

int shmem_init_thread(int requested, int *provided) {
  int rc = goshmem_init(OP("shmem_init_thread"));
  if (rc == 0) gs_finalize_at_exit();
  /* goshmem is safe for concurrent use: every level is provided. */
  gs_thread_level = SHMEM_THREAD_MULTIPLE;
  if (provided) *provided = rc == 0 ? gs_thread_level : requested;
  return rc;
}

void shmem_query_thread(int *provided) {
  if (provided) *provided = gs_thread_level;
}

void shmem_finalize(void) {
  fflush(NULL);
  goshmem_finalize(OP("shmem_finalize"));
}

void shmem_global_exit(int status) {
  fflush(NULL);
  goshmem_global_exit(status);
  gs_die("", status);
}

int shmem_my_pe(void) { return gs_npes ? gs_me : -1; }
int shmem_n_pes(void) { return gs_npes ? gs_npes : -1; }
int _my_pe(void) { return shmem_my_pe(); }
int _num_pes(void) { return shmem_n_pes(); }
int my_pe(void) { return shmem_my_pe(); }
int num_pes(void) { return shmem_n_pes(); }
/* A PE that leaves without shmem_finalize (returns from main or calls
 * exit) is finalized then, as SOS does and as the spec requires of
 * start_pes programs, which ask no shmem_finalize: finalize is
 * collective, so that a PE's last puts and its part of the last barrier
 * reach the others before its connections close (without it the job
 * failed over TCP in about 1 run of 7 on 4 PEs, "BarrierAll (PE 2 -> PE
 * 1): ... connection reset by peer"). After shmem_init, whose programs
 * the spec requires to call shmem_finalize, it says so on stderr naming
 * the PE. An explicit shmem_finalize before makes this do nothing;
 * shmem_global_exit and the error exits (_exit) skip it. So does an exit
 * with a nonzero status (glibc's on_exit tells it): a PE leaving on an
 * error while the others run would only fail its Finalize and hide its
 * status; leaving, it ends their calls with an error naming it and its
 * status. */
static int gs_by_start_pes;

static void gs_exit_finalize(void) {
  if (!gs_npes) return; /* finalized, or never initialized */
  if (!gs_by_start_pes) {
    fflush(stdout);
    fprintf(stderr,
            "goshmem: PE %d is exiting without shmem_finalize (the spec requires it after shmem_init): finalizing it now\n",
            gs_me);
  }
  shmem_finalize();
}

#ifdef __GLIBC__
static void gs_implicit_finalize(int status, void *arg) {
  (void)arg;
  if (status == 0) gs_exit_finalize();
}
#else
static void gs_implicit_finalize(void) { gs_exit_finalize(); }
#endif

/* gs_finalize_at_exit registers gs_implicit_finalize, once: every init
 * path calls it after a successful init. */
void gs_finalize_at_exit(void) {
  static int registered;
  if (__atomic_exchange_n(&registered, 1, __ATOMIC_RELAXED)) return;
#ifdef __GLIBC__
  on_exit(gs_implicit_finalize, NULL);
#else
  atexit(gs_implicit_finalize);
#endif
}

void start_pes(int npes) {
  (void)npes;
  gs_by_start_pes = 1;
  shmem_init();
}
void shmem_pcontrol(const int level, ...) { (void)level; }

int shmem_pe_accessible(int pe) { return goshmem_accessible(pe); }

int shmem_addr_accessible(const void *addr, int pe) {
  size_t off = (size_t)((const char *)addr - gs_base);
  if (off < gs_size) return goshmem_accessible(pe);
  if (!gs_is_static(addr)) return 0;
  /* A static is accessible where this process maps the peer's copy, or
   * else where the network carries it. */
  if ((unsigned)pe < (unsigned)gs_npes && gs_at_static(addr, 1, pe)) return goshmem_accessible(pe);
  return goshmem_statics_accessible(pe);
}

void *shmem_ptr(const void *dest, int pe) { return gs_ptr(dest, pe); }

void shmem_info_get_version(int *major, int *minor) {
  *major = SHMEM_MAJOR_VERSION;
  *minor = SHMEM_MINOR_VERSION;
}

void shmem_info_get_name(char *name) {
  strncpy(name, SHMEM_VENDOR_STRING, SHMEM_MAX_NAME_LEN - 1);
  name[SHMEM_MAX_NAME_LEN - 1] = 0;
}

/* The allocation calls behind shmem_* and aclshmem_* alike: op is the
 * entry point the program called, which its errors name. A zero size is
 * NULL without a call, as the spec allows; an alignment that is not a
 * power of two and a calloc whose count*size overflows size_t are refused
 * in goshmem_alloc, after every PE has joined, with a reason for
 * shmemx_last_error. */
void *gs_malloc(const char *op, size_t size) {
  if (size == 0) return NULL;
  return goshmem_alloc(OP(op), 1, size, 1, 0);
}

void *gs_calloc(const char *op, size_t count, size_t size) {
  if (count == 0 || size == 0) return NULL;
  return goshmem_alloc(OP(op), count, size, 1, 1);
}

void *gs_align(const char *op, size_t alignment, size_t size) {
  if (size == 0) return NULL;
  return goshmem_alloc(OP(op), 1, size, alignment, 0);
}

void gs_free(const char *op, void *ptr) {
  if (ptr) goshmem_free(OP(op), ptr);
}

void *shmem_malloc(size_t size) { return gs_malloc("shmem_malloc", size); }

void *shmem_malloc_with_hints(size_t size, long hints) {
  (void)hints; /* every object supports atomics and signals */
  return gs_malloc("shmem_malloc_with_hints", size);
}

void *shmem_calloc(size_t count, size_t size) { return gs_calloc("shmem_calloc", count, size); }

void *shmem_align(size_t alignment, size_t size) { return gs_align("shmem_align", alignment, size); }

void *shmem_realloc(void *ptr, size_t size) {
  if (!ptr) return gs_malloc("shmem_realloc", size);
  if (size == 0) {
    gs_free("shmem_realloc", ptr);
    return NULL;
  }
  return goshmem_realloc(OP("shmem_realloc"), ptr, size);
}

void shmem_free(void *ptr) { gs_free("shmem_free", ptr); }

/* Quiet and fence: stores to mapped peers are complete once the CPU's
 * store buffer drains, which a full fence forces; only a job that sent
 * RMA through Go asks Go to complete it too. On SHMEM_CTX_INVALID (a
 * context a PE outside its team did not get) they do nothing, as the
 * spec says. */
void shmem_ctx_quiet(shmem_ctx_t ctx) {
  if (ctx == SHMEM_CTX_INVALID) return;
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  if (__atomic_load_n(&gs_go_rma, __ATOMIC_RELAXED)) goshmem_quiet(OP("shmem_ctx_quiet"), (uintptr_t)ctx);
}
void shmem_quiet(void) {
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  if (__atomic_load_n(&gs_go_rma, __ATOMIC_RELAXED)) goshmem_quiet(OP("shmem_quiet"), 1);
}
void shmem_ctx_fence(shmem_ctx_t ctx) {
  if (ctx == SHMEM_CTX_INVALID) return;
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  if (__atomic_load_n(&gs_go_rma, __ATOMIC_RELAXED)) goshmem_fence(OP("shmem_ctx_fence"), (uintptr_t)ctx);
}
void shmem_fence(void) {
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  if (__atomic_load_n(&gs_go_rma, __ATOMIC_RELAXED)) goshmem_fence(OP("shmem_fence"), 1);
}

void shmem_barrier_all(void) {
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  goshmem_barrier_all(OP("shmem_barrier_all"), 0);
}
void shmem_sync_all(void) {
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  goshmem_barrier_all(OP("shmem_sync_all"), 1);
}

uint64_t shmem_signal_fetch(const uint64_t *sig_addr) {
  gs_test_missed("shmem_signal_fetch");
  return __atomic_load_n(sig_addr, __ATOMIC_SEQ_CST);
}

uint64_t shmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value) {
  return gs_signal_wait("shmem_signal_wait_until", sig_addr, cmp, cmp_value);
}

void shmem_set_lock(long *lock) {
  if (gs_static_lock("shmem_set_lock", GS_LOCK_SET, lock) < 0) goshmem_lock(OP("shmem_set_lock"), GS_LOCK_SET, lock);
}
void shmem_clear_lock(long *lock) {
  if (gs_static_lock("shmem_clear_lock", GS_LOCK_CLEAR, lock) >= 0) return;
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  goshmem_lock(OP("shmem_clear_lock"), GS_LOCK_CLEAR, lock);
}
int shmem_test_lock(long *lock) {
  int r = gs_static_lock("shmem_test_lock", GS_LOCK_TEST, lock);
  return r >= 0 ? r : goshmem_lock(OP("shmem_test_lock"), GS_LOCK_TEST, lock);
}

int shmem_ctx_create(long options, shmem_ctx_t *ctx) {
  (void)options; /* every context is as capable as the default one */
  if (!ctx) return -1; /* nowhere to put it: nothing created */
  uintptr_t h = 0;
  int rc = goshmem_ctx_create(OP("shmem_ctx_create"), 1, &h);
  if (rc == 0 && h < GS_MAX_CTX) gs_ctx_map[h] = gs_ctx_world;
  *ctx = (shmem_ctx_t)h;
  return rc;
}
int shmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t *ctx) {
  (void)options;
  if (!ctx) return -1;
  uintptr_t h = 0;
  *ctx = SHMEM_CTX_INVALID;
  int n = shmem_team_n_pes(team);
  if (n < 0) return -1;
  int rc = goshmem_ctx_create(OP("shmem_team_create_ctx"), (uintptr_t)team, &h);
  if (rc != 0) return rc;
  if (team != SHMEM_TEAM_WORLD) {
    /* Its operations name PEs by their number in the team. */
    int *m = h < GS_MAX_CTX ? malloc((size_t)(n + 1) * sizeof(int)) : NULL;
    if (!m) {
      goshmem_ctx_destroy(OP("shmem_team_create_ctx"), h);
      return -1;
    }
    m[0] = n;
    for (int i = 0; i < n; i++) m[i + 1] = shmem_team_translate_pe(team, i, SHMEM_TEAM_WORLD);
    gs_ctx_map[h] = m;
  } else if (h < GS_MAX_CTX) {
    gs_ctx_map[h] = gs_ctx_world;
  }
  *ctx = (shmem_ctx_t)h;
  return 0;
}
void shmem_ctx_destroy(shmem_ctx_t ctx) {
  shmem_ctx_quiet(ctx);
  uintptr_t h = (uintptr_t)ctx;
  if (h > 1 && h < GS_MAX_CTX && gs_ctx_map[h]) {
    if (gs_ctx_map[h] != gs_ctx_world) free(gs_ctx_map[h]);
    gs_ctx_map[h] = NULL;
  }
  goshmem_ctx_destroy(OP("shmem_ctx_destroy"), h);
}
int shmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t *team) {
  if (ctx == SHMEM_CTX_DEFAULT) {
    *team = SHMEM_TEAM_WORLD;
    return 0;
  }
  uintptr_t t = goshmem_ctx_team((uintptr_t)ctx);
  *team = (shmem_team_t)t;
  return t ? 0 : -1;
}

int shmem_team_my_pe(shmem_team_t team) { return goshmem_team_query((uintptr_t)team, 0); }
int shmem_team_n_pes(shmem_team_t team) { return goshmem_team_query((uintptr_t)team, 1); }
int shmem_team_get_config(shmem_team_t team, long config_mask, shmem_team_config_t *config) {
  int nctx = goshmem_team_num_contexts((uintptr_t)team);
  if (nctx < 0) return -1;
  if (config && (config_mask & SHMEM_TEAM_NUM_CONTEXTS)) config->num_contexts = nctx;
  return 0;
}
/* A config counts only with its field named in the mask, as the spec says;
 * then num_contexts goes with the new team (and must agree between PEs). */
static int team_num_contexts(const shmem_team_config_t *config, long mask, int *given) {
  if (!config || !(mask & SHMEM_TEAM_NUM_CONTEXTS)) return 0;
  *given = 1;
  return config->num_contexts;
}
int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team) {
  return goshmem_team_translate((uintptr_t)src_team, src_pe, (uintptr_t)dest_team);
}
void *shmem_team_ptr(shmem_team_t team, const void *dest, int pe) {
  if (team == SHMEM_TEAM_INVALID) return NULL;
  int w = shmem_team_translate_pe(team, pe, SHMEM_TEAM_WORLD);
  return w < 0 ? NULL : gs_ptr(dest, w);
}
int shmem_team_split_strided(shmem_team_t parent_team, int start, int stride, int size,
                             const shmem_team_config_t *config, long config_mask, shmem_team_t *new_team) {
  int given = 0, nctx = team_num_contexts(config, config_mask, &given);
  uintptr_t t = 0;
  int rc = goshmem_team_split_strided(OP("shmem_team_split_strided"), (uintptr_t)parent_team, start, stride, size,
                                      given, nctx, &t);
  *new_team = (shmem_team_t)t;
  return rc;
}
int shmem_team_split_2d(shmem_team_t parent_team, int xrange, const shmem_team_config_t *xaxis_config,
                        long xaxis_mask, shmem_team_t *xaxis_team, const shmem_team_config_t *yaxis_config,
                        long yaxis_mask, shmem_team_t *yaxis_team) {
  int given = 0;
  int xctx = team_num_contexts(xaxis_config, xaxis_mask, &given);
  int yctx = team_num_contexts(yaxis_config, yaxis_mask, &given);
  uintptr_t x = 0, y = 0;
  int rc = goshmem_team_split_2d(OP("shmem_team_split_2d"), (uintptr_t)parent_team, xrange, given, xctx, yctx, &x, &y);
  *xaxis_team = (shmem_team_t)x;
  *yaxis_team = (shmem_team_t)y;
  return rc;
}
int shmem_team_sync(shmem_team_t team) {
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  return goshmem_team_sync(OP("shmem_team_sync"), (uintptr_t)team);
}
void shmem_team_destroy(shmem_team_t team) { goshmem_team_destroy(OP("shmem_team_destroy"), (uintptr_t)team); }

int gs_coll(const char *op, int kind, shmem_team_t team, void *dest, const void *src, size_t nbytes, int root) {
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  /* Every member decides alike: the addresses are symmetric, and a
   * collect's count, which may be 0 on some members only, is not asked. */
  if ((nbytes || kind == GS_COLLECT) && (gs_is_static(dest) || gs_is_static(src)))
    return gs_coll_static(op, kind, team, dest, src, nbytes, root);
  return goshmem_coll(OP(op), kind, (uintptr_t)team, dest, (void *)src, nbytes, root);
}
int gs_alltoalls(const char *op, shmem_team_t team, void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, size_t esize) {
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  if (nelems && (gs_is_static(dest) || gs_is_static(src)))
    return gs_alltoalls_static(op, team, dest, src, dst, sst, nelems, esize);
  return goshmem_alltoalls(OP(op), (uintptr_t)team, dest, (void *)src, dst, sst, nelems, esize);
}
int gs_reduce(const char *op, shmem_team_t team, int tc, int rop, void *dest, const void *src, size_t n) {
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  if (n && (gs_is_static(dest) || gs_is_static(src))) return gs_reduce_static(op, team, tc, rop, dest, src, n);
  return goshmem_reduce(OP(op), (uintptr_t)team, tc, rop, dest, (void *)src, n);
}

int shmem_broadcastmem(shmem_team_t team, void *dest, const void *source, size_t nelems, int PE_root) {
  return gs_coll("shmem_broadcastmem", GS_BCAST, team, dest, source, nelems, PE_root);
}
int shmem_collectmem(shmem_team_t team, void *dest, const void *source, size_t nelems) {
  return gs_coll("shmem_collectmem", GS_COLLECT, team, dest, source, nelems, 0);
}
int shmem_fcollectmem(shmem_team_t team, void *dest, const void *source, size_t nelems) {
  return gs_coll("shmem_fcollectmem", GS_FCOLLECT, team, dest, source, nelems, 0);
}
int shmem_alltoallmem(shmem_team_t team, void *dest, const void *source, size_t nelems) {
  return gs_coll("shmem_alltoallmem", GS_ALLTOALL, team, dest, source, nelems, 0);
}
int shmem_alltoallsmem(shmem_team_t team, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems) {
  return gs_alltoalls("shmem_alltoallsmem", team, dest, source, dst, sst, nelems, 1);
}

void shmem_wait(long *ivar, long cmp_value) {
  gs_wait("shmem_wait", GS_I64, sizeof(long), ivar, 1, NULL, NULL, SHMEM_CMP_NE, &cmp_value, 0, GS_WAIT_ALL, 1);
}
void shmem_wait_until(long *ivar, int cmp, long cmp_value) {
  gs_wait("shmem_wait_until", GS_I64, sizeof(long), ivar, 1, NULL, NULL, cmp, &cmp_value, 0, GS_WAIT_ALL, 1);
}

void gs_no_such_type(void) { gs_die("goshmem: a C11 generic OpenSHMEM routine was called with an unsupported type", 1); }

/* shmemx.h: goshmem's error text for programs that want it. */
const char *shmemx_last_error(void) {
  const char *e = goshmem_last_error();
  return e ? e : "";
}
void shmemx_set_error_mode(int mode) { goshmem_set_abort(mode == 0); }
