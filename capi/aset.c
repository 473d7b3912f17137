/* aset.c: the active-set collectives (deprecated in 1.5, still specified)
 * and reductions of the types goshmem's Go API has no element type for
 * (long double, complex).
 *
 * An active set (PE_start, logPE_stride, PE_size) is not a goshmem team:
 * making one would need every PE of the world, and only the set's members
 * call. So these routines synchronize with atomics on the library's own
 * symmetric area (the start of the C heap, laid out as init.go's sysArea
 * says) and move data with gets and puts, so their data may be statics
 * (statics.c), ignoring pSync and pWrk. The barrier runs in C between
 * mapped PEs and in Go (aset.go) otherwise. Sets that share their first
 * PE and hash to the same of 64 slots must not run at the same time (the
 * spec asks programs not to reuse a pSync concurrently, which such
 * programs already obey). */
#include <stdio.h>
#include <stdlib.h>
#include "gs.h"
#include "_cgo_export.h"

#define NSLOTS 64
static uint64_t epoch[NSLOTS]; /* per process: barriers this PE ran in each slot */

static uint64_t *aset_counts(void) { return (uint64_t *)gs_base + (gs_npes + 1); }
static uint64_t *arrive(void) { return (uint64_t *)gs_base + (2 * gs_npes + 1); }
static uint64_t *release(void) { return arrive() + NSLOTS; }

typedef struct {
  int start, stride, size, idx;
} aset;

static aset member(const char *op, int start, int log, int size) {
  aset a = {start, 1 << log, size, -1};
  int d = gs_me - start;
  char msg[220];
  if (size < 1 || log < 0 || log > 30 || start < 0 || start + (long)(size - 1) * a.stride >= gs_npes) {
    snprintf(msg, sizeof msg, "goshmem: %s: the active set (start %d, log stride %d, size %d) does not fit in the %d PEs (PE %d): invalid argument",
             op, start, log, size, gs_npes, gs_me);
    gs_die(msg, 1);
  }
  if (d < 0 || d % a.stride || d / a.stride >= size) {
    snprintf(msg, sizeof msg, "goshmem: %s: PE %d is not in the active set (start %d, log stride %d, size %d) of %d PEs",
             op, gs_me, start, log, size, gs_npes);
    gs_die(msg, 1);
  }
  a.idx = d / a.stride;
  return a;
}

static int pe_of(aset a, int i) { return a.start + i * a.stride; }

/* mapped reports whether this PE maps every member of a. */
static int mapped(aset a) {
  for (int i = 0; i < a.size; i++)
    if (!gs_peer[pe_of(a, i)]) return 0;
  return 1;
}

static void aset_barrier(const char *op, aset a) {
  unsigned slot = ((unsigned)a.stride * 31u + (unsigned)a.size * 17u) % NSLOTS;
  uint64_t e = ++epoch[slot];
  if (!mapped(a)) {
    goshmem_aset_barrier((char *)op, &arrive()[slot], &release()[slot], e, a.start, a.stride, a.size);
    return;
  }
  shmem_quiet();
  int root = pe_of(a, 0);
  shmem_uint64_atomic_add(&arrive()[slot], 1, root);
  if (gs_me == root) {
    uint64_t want = e * (uint64_t)a.size;
    gs_wait(op, GS_U64, 8, &arrive()[slot], 1, NULL, NULL, SHMEM_CMP_GE, &want, 0, GS_WAIT_ALL, 1);
    for (int i = 1; i < a.size; i++) shmem_uint64_atomic_set(&release()[slot], e, pe_of(a, i));
  } else {
    gs_wait(op, GS_U64, 8, &release()[slot], 1, NULL, NULL, SHMEM_CMP_GE, &e, 0, GS_WAIT_ALL, 1);
  }
}

void shmem_barrier(int PE_start, int logPE_stride, int PE_size, long *pSync) {
  (void)pSync;
  aset_barrier("shmem_barrier", member("shmem_barrier", PE_start, logPE_stride, PE_size));
}

#undef shmem_sync
void shmem_sync(int PE_start, int logPE_stride, int PE_size, long *pSync) {
  (void)pSync;
  aset_barrier("shmem_sync", member("shmem_sync", PE_start, logPE_stride, PE_size));
}

static void broadcast(const char *op, void *dest, const void *source, size_t nbytes, int root, int start, int log, int size) {
  aset a = member(op, start, log, size);
  if (root < 0 || root >= size) {
    char msg[160];
    snprintf(msg, sizeof msg, "goshmem: %s: root %d is not in an active set of %d PEs", op, root, size);
    gs_die(msg, 1);
  }
  aset_barrier(op, a);
  if (a.idx != root) gs_get(SHMEM_CTX_DEFAULT, op, dest, source, nbytes, pe_of(a, root), 0);
  aset_barrier(op, a);
}

void shmem_broadcast32(void *dest, const void *source, size_t nelems, int PE_root, int PE_start, int logPE_stride, int PE_size, long *pSync) {
  (void)pSync;
  broadcast("shmem_broadcast32", dest, source, nelems * 4, PE_root, PE_start, logPE_stride, PE_size);
}
void shmem_broadcast64(void *dest, const void *source, size_t nelems, int PE_root, int PE_start, int logPE_stride, int PE_size, long *pSync) {
  (void)pSync;
  broadcast("shmem_broadcast64", dest, source, nelems * 8, PE_root, PE_start, logPE_stride, PE_size);
}

static void fcollect(const char *op, void *dest, const void *source, size_t nbytes, int start, int log, int size) {
  aset a = member(op, start, log, size);
  aset_barrier(op, a);
  /* The gets overlap over the network; the barrier's quiet ends them. */
  for (int i = 0; i < a.size; i++) gs_get(SHMEM_CTX_DEFAULT, op, (char *)dest + i * nbytes, source, nbytes, pe_of(a, i), 1);
  aset_barrier(op, a);
}

void shmem_fcollect32(void *dest, const void *source, size_t nelems, int PE_start, int logPE_stride, int PE_size, long *pSync) {
  (void)pSync;
  fcollect("shmem_fcollect32", dest, source, nelems * 4, PE_start, logPE_stride, PE_size);
}
void shmem_fcollect64(void *dest, const void *source, size_t nelems, int PE_start, int logPE_stride, int PE_size, long *pSync) {
  (void)pSync;
  fcollect("shmem_fcollect64", dest, source, nelems * 8, PE_start, logPE_stride, PE_size);
}

static void collect(const char *op, void *dest, const void *source, size_t nbytes, int start, int log, int size) {
  aset a = member(op, start, log, size);
  uint64_t nb = nbytes;
  for (int i = 0; i < a.size; i++) shmem_putmem(&aset_counts()[a.idx], &nb, sizeof nb, pe_of(a, i));
  aset_barrier(op, a);
  size_t off = 0;
  for (int i = 0; i < a.size; i++) {
    size_t n = aset_counts()[i];
    gs_get(SHMEM_CTX_DEFAULT, op, (char *)dest + off, source, n, pe_of(a, i), 1);
    off += n;
  }
  aset_barrier(op, a); /* quiets first */
}

void shmem_collect32(void *dest, const void *source, size_t nelems, int PE_start, int logPE_stride, int PE_size, long *pSync) {
  (void)pSync;
  collect("shmem_collect32", dest, source, nelems * 4, PE_start, logPE_stride, PE_size);
}
void shmem_collect64(void *dest, const void *source, size_t nelems, int PE_start, int logPE_stride, int PE_size, long *pSync) {
  (void)pSync;
  collect("shmem_collect64", dest, source, nelems * 8, PE_start, logPE_stride, PE_size);
}

static void alltoalls(const char *op, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,
                      size_t esize, int start, int log, int size) {
  aset a = member(op, start, log, size);
  aset_barrier(op, a);
  for (int i = 0; i < a.size; i++) {
    char *d = (char *)dest + (size_t)a.idx * nelems * dst * esize;
    const char *s = (const char *)source + (size_t)i * nelems * sst * esize;
    gs_strided(SHMEM_CTX_DEFAULT, op, 1, d, s, esize, dst, sst, nelems, pe_of(a, i));
  }
  aset_barrier(op, a); /* quiets first */
}

void shmem_alltoall32(void *dest, const void *source, size_t nelems, int PE_start, int logPE_stride, int PE_size, long *pSync) {
  (void)pSync;
  alltoalls("shmem_alltoall32", dest, source, 1, 1, nelems, 4, PE_start, logPE_stride, PE_size);
}
void shmem_alltoall64(void *dest, const void *source, size_t nelems, int PE_start, int logPE_stride, int PE_size, long *pSync) {
  (void)pSync;
  alltoalls("shmem_alltoall64", dest, source, 1, 1, nelems, 8, PE_start, logPE_stride, PE_size);
}
void shmem_alltoalls32(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int PE_start, int logPE_stride, int PE_size, long *pSync) {
  (void)pSync;
  alltoalls("shmem_alltoalls32", dest, source, dst, sst, nelems, 4, PE_start, logPE_stride, PE_size);
}
void shmem_alltoalls64(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int PE_start, int logPE_stride, int PE_size, long *pSync) {
  (void)pSync;
  alltoalls("shmem_alltoalls64", dest, source, dst, sst, nelems, 8, PE_start, logPE_stride, PE_size);
}

/* gather_reduce folds every member's source, in member order (so every PE
 * computes the same bits), into a private buffer; the caller has
 * synchronized so that every source is ready. */
static void *gather_reduce(const char *op, const void *source, size_t n, size_t esize, int members, int (*pe)(void *, int),
                           void *ctx, gs_combine f) {
  size_t nb = n * esize;
  char *acc = malloc(nb ? nb : 1), *tmp = malloc(nb ? nb : 1);
  if (!acc || !tmp) gs_die("goshmem: reduction: out of memory", 1);
  gs_get(SHMEM_CTX_DEFAULT, op, acc, source, nb, pe(ctx, 0), 0);
  for (int i = 1; i < members; i++) {
    gs_get(SHMEM_CTX_DEFAULT, op, tmp, source, nb, pe(ctx, i), 0);
    f(acc, tmp, n);
  }
  free(tmp);
  return acc;
}

static int aset_pe(void *a, int i) { return pe_of(*(aset *)a, i); }

void gs_to_all(const char *op, void *dest, const void *src, int n, size_t esize, int start, int log, int size, gs_combine f) {
  aset a = member(op, start, log, size);
  if (n < 0) {
    char msg[160];
    snprintf(msg, sizeof msg, "goshmem: %s: nreduce %d is negative (PE %d): invalid argument", op, n, gs_me);
    gs_die(msg, 1);
  }
  if (n == 0) return;
  aset_barrier(op, a);
  void *acc = gather_reduce(op, src, (size_t)n, esize, a.size, aset_pe, &a, f);
  aset_barrier(op, a); /* every member has read every source: dest may alias it */
  memcpy(dest, acc, (size_t)n * esize);
  free(acc);
}

static int team_pe(void *t, int i) { return shmem_team_translate_pe(*(shmem_team_t *)t, i, SHMEM_TEAM_WORLD); }

int gs_reduce_c(const char *op, shmem_team_t team, void *dest, const void *src, size_t n, size_t esize, gs_combine f) {
  int members = shmem_team_n_pes(team);
  if (members < 0) return -1;
  if (n == 0) return 0;
  if (shmem_team_sync(team) != 0) return -1;
  void *acc = gather_reduce(op, src, n, esize, members, team_pe, &team, f);
  int rc = shmem_team_sync(team);
  memcpy(dest, acc, n * esize);
  free(acc);
  return rc;
}
