/*
 * gs.h: libgoshmem's internal C side. Not installed.
 *
 * The C routines address peers directly where goshmem maps their heaps
 * (PEs on this host): after shmem_init, gs_peer[pe] is the address at
 * which this process maps PE pe's part of the C heap (NULL where it is not
 * mapped: other hosts, or TCP forced), and gs_base/gs_size are this PE's
 * own part. A put to a mapped peer is then a memcpy and an atomic is a C11
 * atomic on the peer's word, with no call into Go; everything else falls
 * back to the Go exports (_cgo_export.h), which check and report errors.
 */
#ifndef GOSHMEM_GS_H
#define GOSHMEM_GS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "shmem.h"

/* Type codes of the Go side's typed calls. */
enum { GS_I8 = 1, GS_I16, GS_I32, GS_I64, GS_U8, GS_U16, GS_U32, GS_U64, GS_F32, GS_F64 };
/* Reduction operations, in goshmem's Op order. */
enum { GS_OP_SUM = 1, GS_OP_PROD, GS_OP_MIN, GS_OP_MAX, GS_OP_AND, GS_OP_OR, GS_OP_XOR };
/* Atomic operation codes of gs_amo (the Go fallback). ADD, AND, OR and
 * XOR are the non-fetching forms: posted like a put (completed by quiet),
 * where the fetching F forms wait for the old value. */
enum { GS_AMO_FETCH = 1, GS_AMO_SET, GS_AMO_SWAP, GS_AMO_CSWAP, GS_AMO_FADD, GS_AMO_FAND, GS_AMO_FOR, GS_AMO_FXOR,
       GS_AMO_ADD, GS_AMO_AND, GS_AMO_OR, GS_AMO_XOR };
/* RMA kinds of the Go fallback. */
enum { GS_PUT = 1, GS_GET, GS_PUT_NBI, GS_GET_NBI };
/* Team collectives. */
enum { GS_BCAST = 1, GS_COLLECT, GS_FCOLLECT, GS_ALLTOALL };
/* Wait and test modes. */
enum { GS_WAIT_ALL = 1, GS_WAIT_ANY, GS_WAIT_SOME };
/* Lock calls. */
enum { GS_LOCK_SET = 1, GS_LOCK_CLEAR, GS_LOCK_TEST };

extern char *gs_base;
extern size_t gs_size;
extern char **gs_peer;
/* gs_rma_peer is gs_peer as the RMA and atomic fast paths use it: the
 * same table, but with no entry at all when no peer is mapped (see
 * gs_setup). */
extern char **gs_rma_peer;
extern int gs_me, gs_npes;
/* Set when some peer is not mapped: writes from it arrive through this
 * process's own Go threads (the network transport's readers), which need
 * this PE's core to land them (p2p.c's gs_wait). */
extern int gs_unmapped_peers;
/* Set when no peer is mapped: every write into this PE comes through Go. */
extern int gs_no_mapped_peers;
/* Set once any RMA went through Go: from then on quiet and fence must ask
 * Go too. A job whose peers are all mapped never sets it, so its quiet is
 * a memory fence. */
extern int gs_go_rma;

/* A context made from a team addresses PEs by their number in that team:
 * gs_ctx_map[handle] is {n, world PE of team PE 0, ..., of n-1} for such
 * contexts, NULL for the others (set by shmem_team_create_ctx). */
#define GS_MAX_CTX 4096
extern int *gs_ctx_map[GS_MAX_CTX];
/* gs_ctx_world marks in gs_ctx_map a live context on the world. The Go
 * side hands out context handles below GS_MAX_CTX only (ctxTab.addIn),
 * and every live one has an entry, so a destroyed or made-up handle, in
 * the table or past it, takes the Go path, which refuses it. */
extern int gs_ctx_world[1];

/* gs_pe returns the world PE that pe names on ctx, or -1 (no fast path:
 * the Go path reports the error) for a handle that is no context:
 * SHMEM_CTX_INVALID, a destroyed or made-up one (GS_MAX_CTX or more
 * included), which the spec leaves undefined and the Go path refuses.
 * The compiler makes the first test one unsigned compare, which
 * SHMEM_CTX_DEFAULT also takes. */
static inline int gs_pe(shmem_ctx_t ctx, int pe) {
  uintptr_t h = (uintptr_t)ctx;
  if (h <= 1 || h >= GS_MAX_CTX) return h == 1 ? pe : -1;
  int *m = gs_ctx_map[h];
  if (m == gs_ctx_world) return pe;
  if (!m) return -1;
  return (unsigned)pe < (unsigned)m[0] ? m[pe + 1] : -1;
}

/* The program's statics (statics.c): [gs_dbase, gs_dbase+gs_dsize) is
 * this process's data and bss, shared memory since init; gs_dpeer[pe] is
 * where this process maps PE pe's copy (NULL where it is not mapped: other
 * hosts, TCP forced). gs_dsize is 0 when statics are not symmetric here
 * (gs_dwhy says why). */
extern char *gs_dbase;
extern size_t gs_dsize;
extern char **gs_dpeer;
extern char gs_dwhy[320];
/* Words of the library's symmetric area where a PE publishes its statics. */
#define GS_DINFO_WORDS 8

static inline char *gs_at_static(const void *addr, size_t n, int pe) {
  size_t off = (size_t)((const char *)addr - gs_dbase);
  if (off >= gs_dsize || n > gs_dsize - off) return NULL;
  char *b = gs_dpeer[pe];
  return b ? b + off : NULL;
}

/* gs_at returns where this process reaches [addr, addr+n) on pe, or NULL
 * when the Go path must do the access (pe not mapped, or addr not
 * symmetric, in which case Go reports the error). The heap is checked
 * first: statics cost its fast path nothing. */
/* gs_in_heap reports whether [addr, addr+n) lies in the symmetric heap. */
static inline int gs_in_heap(const void *addr, size_t n) {
  size_t off = (size_t)((const char *)addr - gs_base);
  return off < gs_size && n <= gs_size - off;
}

static inline char *gs_at(const void *addr, size_t n, int pe) {
  if ((unsigned)pe >= (unsigned)gs_npes) return NULL;
  if (!gs_in_heap(addr, n)) return gs_at_static(addr, n, pe);
  char *b = gs_rma_peer[pe];
  return b ? b + ((const char *)addr - gs_base) : NULL;
}

/* gs_at_amo is gs_at for an atomic, signal or lock word of n bytes (a
 * power of two): NULL also when addr is not naturally aligned, which the
 * spec's memory model requires of them, so that the Go path refuses it
 * with a message, as it does for a peer on another host, rather than
 * doing a torn (or, off x86, faulting) C11 atomic. */
static inline char *gs_at_amo(const void *addr, size_t n, int pe) {
  if ((uintptr_t)addr & (n - 1)) return NULL;
  return gs_at(addr, n, pe);
}

/* gs_ptr is shmem_ptr: gs_at, but the PE's own memory is always reached. */
static inline void *gs_ptr(const void *addr, int pe) {
  if (pe == gs_me && gs_npes > 0 && gs_in_heap(addr, 1)) return (void *)addr;
  return gs_at(addr, 1, pe);
}

/* The allocation calls (api.c), shared by shmem_* and aclshmem_*: op is
 * the entry point the program called, which the errors name. */
void *gs_malloc(const char *op, size_t size);
void *gs_calloc(const char *op, size_t count, size_t size);
void *gs_align(const char *op, size_t alignment, size_t size);
void gs_free(const char *op, void *ptr);

void gs_put_slow(shmem_ctx_t ctx, const char *op, void *dest, const void *src, size_t n, int pe, int nbi);
void gs_get_slow(shmem_ctx_t ctx, const char *op, void *dest, const void *src, size_t n, int pe, int nbi);

static inline void gs_put(shmem_ctx_t ctx, const char *op, void *dest, const void *src, size_t n, int pe, int nbi) {
  pe = gs_pe(ctx, pe);
  char *r = gs_at(dest, n, pe);
  if (r) {
    memcpy(r, src, n);
    return;
  }
  gs_put_slow(ctx, op, dest, src, n, pe, nbi);
}

static inline void gs_get(shmem_ctx_t ctx, const char *op, void *dest, const void *src, size_t n, int pe, int nbi) {
  pe = gs_pe(ctx, pe);
  char *r = gs_at(src, n, pe);
  if (r) {
    memcpy(dest, r, n);
    return;
  }
  gs_get_slow(ctx, op, dest, src, n, pe, nbi);
}

void gs_strided(shmem_ctx_t ctx, const char *op, int put, void *dest, const void *src, size_t esize,
                ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);
void gs_put_signal(shmem_ctx_t ctx, const char *op, void *dest, const void *src, size_t n,
                   uint64_t *sig, uint64_t value, int sig_op, int pe, int nbi);
uint64_t gs_amo(shmem_ctx_t ctx, const char *op, int code, size_t width, const void *addr, uint64_t value, uint64_t cond, int pe);
/* gs_lock_amo is gs_amo on a static lock's word (8 bytes on PE 0) for a
 * lock call that waits: a failure of PE 0 that follows another PE's is
 * reported as that one's (goshmem_lock_amo). */
uint64_t gs_lock_amo(const char *op, int code, const void *addr, uint64_t value, uint64_t cond);
void gs_amo_nbi(shmem_ctx_t ctx, const char *op, int code, size_t width, const void *addr, uint64_t value, uint64_t cond, int pe,
                void *fetch);
/* gs_pacer paces a C wait's look at its peers' state (goshmem_check's
 * peers argument) as Go's waits pace theirs (core.firstCheck): first
 * after max(2 ms, 20 us a PE), then at intervals doubling up to a second.
 * Each look reads every PE's state, remotely for PEs on other hosts. */
typedef struct {
  uint64_t next, every;
} gs_pacer;

static inline void gs_pacer_start(gs_pacer *p, uint64_t now_ns) {
  p->every = (uint64_t)gs_npes * 20000u > 2000000u ? (uint64_t)gs_npes * 20000u : 2000000u;
  p->next = now_ns + p->every;
}

/* gs_pacer_due reports whether a look is due at now_ns, and if so
 * schedules the next. */
static inline int gs_pacer_due(gs_pacer *p, uint64_t now_ns) {
  if (now_ns < p->next) return 0;
  p->every = p->every < 500000000u ? 2 * p->every : 1000000000u;
  p->next = now_ns + p->every;
  return 1;
}

size_t gs_wait(const char *op, int tc, size_t esize, void *ivars, size_t n, const int *status, size_t *indices,
               int cmp, const void *values, int vector, int mode, int block);
/* gs_wait_mapped is gs_wait on memory that need not be this PE's
 * symmetric memory: a mapped peer's word (slock.c). */
size_t gs_wait_mapped(const char *op, int tc, size_t esize, void *ivars, size_t n, const int *status, size_t *indices,
                      int cmp, const void *values, int vector, int mode, int block);
uint64_t gs_signal_wait(const char *op, uint64_t *sig, int cmp, uint64_t v);
void gs_test_missed(const char *op);
int gs_reduce(const char *op, shmem_team_t team, int tc, int rop, void *dest, const void *src, size_t n);
typedef void (*gs_combine)(void *acc, const void *x, size_t n);
int gs_reduce_c(const char *op, shmem_team_t team, void *dest, const void *src, size_t n, size_t esize, gs_combine f);
void gs_to_all(const char *op, void *dest, const void *src, int n, size_t esize, int start, int logstride, int size, gs_combine f);
int gs_coll(const char *op, int kind, shmem_team_t team, void *dest, const void *src, size_t nbytes, int root);
int gs_alltoalls(const char *op, shmem_team_t team, void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, size_t esize);

/* Called by the Go side at init and finalize. */
void gs_setup(char *base, size_t size, char **peers, int me, int npes);
void gs_die(const char *msg, int status);
void gs_peer_failed(int pe);
/* gs_finalize_at_exit makes the PE finalize when the program exits
 * without shmem_finalize (api.c); every init path calls it. */
void gs_finalize_at_exit(void);
char *gs_statics_prepare(size_t *size);
uint64_t gs_statics_layout(void);
void gs_statics_local(void *info);
const char *gs_statics_map(size_t off);
void gs_statics_fini(int npes);
int gs_static_lock(const char *op, int kind, long *lock);
/* The team collectives on statics (teamstatic.c). */
extern size_t gs_dinfo_off;
int gs_is_static(const void *p);
int gs_coll_static(const char *op, int kind, shmem_team_t team, void *dest, const void *src, size_t nb, int root);
int gs_alltoalls_static(const char *op, shmem_team_t team, void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst,
                        size_t nelems, size_t esize);
int gs_reduce_static(const char *op, shmem_team_t team, int tc, int rop, void *dest, const void *src, size_t n);

#endif
