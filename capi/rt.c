/* rt.c: the C side's state, the Go fallbacks of the RMA and atomic fast
 * paths, and the end of the program on errors. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "gs.h"
#include "_cgo_export.h"

char *gs_base;
size_t gs_size;
char **gs_peer, **gs_rma_peer;
int gs_me, gs_npes;
int gs_unmapped_peers, gs_no_mapped_peers;
int gs_go_rma;
int *gs_ctx_map[GS_MAX_CTX];
int gs_ctx_world[1];

#define OP(op) ((char *)(op))
#define CTX(ctx) ((uintptr_t)(ctx))

void gs_setup(char *base, size_t size, char **peers, int me, int npes) {
  if (!base) {
    /* finalize: every later access takes the Go path, which reports it */
    gs_npes = 0;
    gs_size = 0;
    gs_unmapped_peers = gs_no_mapped_peers = 0;
    return; /* the tables stay: a racing call reads them, finds npes 0 */
  }
  if (gs_rma_peer != gs_peer) free(gs_rma_peer); /* a previous world's */
  /* A previous world's contexts ended with it, destroyed or not: their
   * handles must take the Go path, which refuses them. */
  for (int h = 0; h < GS_MAX_CTX; h++) {
    if (gs_ctx_map[h] != gs_ctx_world) free(gs_ctx_map[h]);
    gs_ctx_map[h] = NULL;
  }
  gs_base = base;
  gs_size = size;
  gs_peer = gs_rma_peer = peers;
  gs_me = me;
  gs_npes = npes;
  gs_unmapped_peers = 0;
  gs_no_mapped_peers = npes > 1;
  for (int pe = 0; pe < npes; pe++) {
    if (pe != me && !peers[pe]) gs_unmapped_peers = 1;
    if (pe != me && peers[pe]) gs_no_mapped_peers = 0;
  }
  if (gs_no_mapped_peers) {
    /* Every write into this PE then comes through Go, which rings the
     * PE's bell, so a C wait can sleep in Go's (p2p.c): the PE's own heap
     * is reached through Go too, or its own writes would ring nothing. */
    gs_rma_peer = calloc((size_t)npes, sizeof *gs_rma_peer);
    if (!gs_rma_peer) gs_die("goshmem: shmem_init: out of memory", 1);
  }
}

/* gs_peer_failed takes PE pe, which goshmem has recorded failed, out of
 * the tables of mapped peers (unmap.go), heap and statics: from then on an
 * access to it takes the Go path, which reports the failure, instead of
 * reading or writing memory that outlived the PE. The mappings stay until
 * the process ends (a call racing with this one may still be copying), and
 * so does a static one at finalize, which finds no entry to unmap. */
void gs_peer_failed(int pe) {
  if ((unsigned)pe >= (unsigned)gs_npes || pe == gs_me) return;
  if (gs_rma_peer) __atomic_store_n(&gs_rma_peer[pe], NULL, __ATOMIC_RELAXED);
  if (gs_peer) __atomic_store_n(&gs_peer[pe], NULL, __ATOMIC_RELAXED);
  if (gs_dpeer) __atomic_store_n(&gs_dpeer[pe], NULL, __ATOMIC_RELAXED);
  gs_unmapped_peers = 1;
}

/* gs_die ends the program after an error in a call without a return code:
 * C stdio buffers are flushed so the program's own output survives. */
void gs_die(const char *msg, int status) {
  if (msg && *msg) {
    fflush(stdout);
    fprintf(stderr, "%s\n", msg);
  }
  fflush(NULL);
  _exit(status);
}

static inline void gs_mark_go(void) {
  if (!__atomic_load_n(&gs_go_rma, __ATOMIC_RELAXED)) __atomic_store_n(&gs_go_rma, 1, __ATOMIC_RELAXED);
}

void gs_put_slow(shmem_ctx_t ctx, const char *op, void *dest, const void *src, size_t n, int pe, int nbi) {
  gs_mark_go();
  goshmem_rma(OP(op), CTX(ctx), nbi ? GS_PUT_NBI : GS_PUT, dest, (void *)src, n, pe);
}

void gs_get_slow(shmem_ctx_t ctx, const char *op, void *dest, const void *src, size_t n, int pe, int nbi) {
  gs_mark_go();
  goshmem_rma(OP(op), CTX(ctx), nbi ? GS_GET_NBI : GS_GET, (void *)src, dest, n, pe);
}

void gs_strided(shmem_ctx_t ctx, const char *op, int put, void *dest, const void *src, size_t esize,
                ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe) {
  if (nelems == 0) return;
  pe = gs_pe(ctx, pe);
  const void *remote = put ? dest : src;
  ptrdiff_t rs = put ? dst : sst;
  if (rs >= 1 && dst >= 1 && sst >= 1) {
    char *r = gs_at(remote, ((nelems - 1) * (size_t)rs + 1) * esize, pe);
    if (r) {
      char *d = put ? r : (char *)dest;
      const char *s = put ? (const char *)src : r;
      for (size_t i = 0; i < nelems; i++) memcpy(d + i * dst * esize, s + i * sst * esize, esize);
      return;
    }
  }
  gs_mark_go();
  if (put)
    goshmem_strided(OP(op), CTX(ctx), 1, dest, (void *)src, esize, dst, sst, nelems, pe);
  else
    goshmem_strided(OP(op), CTX(ctx), 0, (void *)src, dest, esize, sst, dst, nelems, pe);
}

void gs_put_signal(shmem_ctx_t ctx, const char *op, void *dest, const void *src, size_t n,
                   uint64_t *sig, uint64_t value, int sig_op, int pe, int nbi) {
  pe = gs_pe(ctx, pe);
  char *r = gs_at(dest, n, pe);
  uint64_t *s = (uint64_t *)gs_at_amo(sig, sizeof *sig, pe);
  int known = sig_op == SHMEM_SIGNAL_SET || sig_op == SHMEM_SIGNAL_ADD;
  if (r && s && known) {
    memcpy(r, src, n);
    /* The release orders the data before the signal for the waiter. */
    if (sig_op == SHMEM_SIGNAL_SET)
      __atomic_store_n(s, value, __ATOMIC_SEQ_CST);
    else
      __atomic_fetch_add(s, value, __ATOMIC_SEQ_CST);
    return;
  }
  if (pe == gs_me && known && (r ? !s && gs_in_heap(sig, sizeof *sig) : s && gs_in_heap(dest, n))) {
    /* The PE's own heap goes through Go (no peer mapped: gs_setup) and
     * its statics do not, so no one Go path reaches both: the data, then
     * the signal, each its own way. Both complete before the call
     * returns, so the signal still follows the data. Only for two
     * symmetric addresses: Go refuses any other before writing. */
    if (r)
      memcpy(r, src, n);
    else
      gs_put_slow(ctx, op, dest, src, n, pe, 0);
    if (!s)
      gs_amo(ctx, op, sig_op == SHMEM_SIGNAL_SET ? GS_AMO_SET : GS_AMO_ADD, 8, sig, value, 0, pe);
    else if (sig_op == SHMEM_SIGNAL_SET)
      __atomic_store_n(s, value, __ATOMIC_SEQ_CST);
    else
      __atomic_fetch_add(s, value, __ATOMIC_SEQ_CST);
    return;
  }
  gs_mark_go();
  goshmem_put_signal(OP(op), CTX(ctx), nbi, dest, (void *)src, n, sig, value, sig_op, pe);
}

uint64_t gs_amo(shmem_ctx_t ctx, const char *op, int code, size_t width, const void *addr, uint64_t value, uint64_t cond, int pe) {
  gs_mark_go();
  return goshmem_amo(OP(op), CTX(ctx), code, width, (void *)addr, value, cond, pe);
}

uint64_t gs_lock_amo(const char *op, int code, const void *addr, uint64_t value, uint64_t cond) {
  gs_mark_go();
  return goshmem_lock_amo(OP(op), code, (void *)addr, value, cond);
}

void gs_amo_nbi(shmem_ctx_t ctx, const char *op, int code, size_t width, const void *addr, uint64_t value, uint64_t cond, int pe,
                void *fetch) {
  gs_mark_go();
  goshmem_amo_nbi(OP(op), CTX(ctx), code, width, (void *)addr, value, cond, pe, fetch);
}
