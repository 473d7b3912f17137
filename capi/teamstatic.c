/* teamstatic.c: the team collectives when their data is a static.
 *
 * goshmem's Go collectives address its heap only, so a team collective
 * whose dest or source is a static (statics.c) runs here instead, as the
 * active-set routines do: a team sync, then gets (or puts) of each
 * member's data, which gs_at turns into copies from the mapped peers'
 * statics, then a team sync. A member whose statics are not mapped (other
 * hosts, TCP forced) takes the Go path of those gets, over the network
 * (TCP or the fabric provider); where that fails (a peer gone, say) the
 * error names the collective, and with SHMEMX_ERRORS_RETURN the
 * collective returns nonzero (failed tells: every recorded error is a new
 * string). */
#include <stdlib.h>
#include "gs.h"
#include "_cgo_export.h"

/* Where this PE's statics words lie in the library's symmetric area: the
 * last word holds this PE's byte count for a collect, which the other
 * members get. Set by gs_statics_map. */
size_t gs_dinfo_off;
#define COLLECT_WORD (gs_dinfo_off + 8 * (GS_DINFO_WORDS - 1))

/* gs_is_static reports whether p is among this process's statics. */
int gs_is_static(const void *p) { return (size_t)((const char *)p - gs_dbase) < gs_dsize; }

static int failed(const char *before, int rc) { return rc != 0 || goshmem_last_error() != before ? -1 : 0; }

static int world_pe(shmem_team_t team, int i) { return shmem_team_translate_pe(team, i, SHMEM_TEAM_WORLD); }

int gs_coll_static(const char *op, int kind, shmem_team_t team, void *dest, const void *src, size_t nb, int root) {
  int n = shmem_team_n_pes(team), me = shmem_team_my_pe(team);
  if (n < 0 || me < 0 || (kind == GS_BCAST && (root < 0 || root >= n))) return -1;
  const char *e0 = goshmem_last_error();
  if (shmem_team_sync(team) != 0) return -1;
  switch (kind) {
    case GS_BCAST:
      /* root's dest too, as the Go Broadcast does (in place allowed) */
      gs_get(SHMEM_CTX_DEFAULT, op, dest, src, nb, world_pe(team, root), 0);
      break;
    case GS_FCOLLECT:
      for (int i = 0; i < n; i++) gs_get(SHMEM_CTX_DEFAULT, op, (char *)dest + (size_t)i * nb, src, nb, world_pe(team, i), 0);
      break;
    case GS_ALLTOALL:
      for (int i = 0; i < n; i++)
        gs_put(SHMEM_CTX_DEFAULT, op, (char *)dest + (size_t)me * nb, (const char *)src + (size_t)i * nb, nb, world_pe(team, i), 0);
      shmem_quiet();
      break;
    default: { /* GS_COLLECT: every member's count first */
      uint64_t mine = nb, *word = (uint64_t *)(gs_base + COLLECT_WORD);
      __atomic_store_n(word, mine, __ATOMIC_SEQ_CST);
      if (shmem_team_sync(team) != 0) return -1;
      size_t off = 0;
      for (int i = 0; i < n; i++) {
        uint64_t c;
        int pe = world_pe(team, i);
        gs_get(SHMEM_CTX_DEFAULT, op, &c, word, sizeof c, pe, 0);
        gs_get(SHMEM_CTX_DEFAULT, op, (char *)dest + off, src, c, pe, 0);
        off += c;
      }
    }
  }
  return failed(e0, shmem_team_sync(team));
}

int gs_alltoalls_static(const char *op, shmem_team_t team, void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst,
                        size_t nelems, size_t esize) {
  int n = shmem_team_n_pes(team), me = shmem_team_my_pe(team);
  if (n < 0 || me < 0 || dst < 1 || sst < 1) return -1;
  const char *e0 = goshmem_last_error();
  if (shmem_team_sync(team) != 0) return -1;
  for (int i = 0; i < n; i++) {
    char *d = (char *)dest + (size_t)me * nelems * dst * esize;
    const char *s = (const char *)src + (size_t)i * nelems * sst * esize;
    gs_strided(SHMEM_CTX_DEFAULT, op, 1, d, s, esize, dst, sst, nelems, world_pe(team, i));
  }
  shmem_quiet();
  return failed(e0, shmem_team_sync(team));
}

/* combine folds x into acc by the reduction rop on elements of type tc.
 * A float NaN fails every comparison, so NAN(b) takes it over any number:
 * any NaN gives NaN, as the Go Reduce does. */
#define FOLD(T, INT, NAN)                                                      \
  {                                                                            \
    T *a = acc;                                                                \
    const T *b = x;                                                            \
    for (size_t i = 0; i < n; i++) switch (rop) {                              \
        case GS_OP_SUM: a[i] = (T)(a[i] + b[i]); break;                        \
        case GS_OP_PROD: a[i] = (T)(a[i] * b[i]); break;                       \
        case GS_OP_MIN: a[i] = b[i] < a[i] || NAN(b[i]) ? b[i] : a[i]; break;  \
        case GS_OP_MAX: a[i] = b[i] > a[i] || NAN(b[i]) ? b[i] : a[i]; break;  \
        case GS_OP_AND: a[i] = INT(a[i], &, b[i]); break;                      \
        case GS_OP_OR: a[i] = INT(a[i], |, b[i]); break;                       \
        default: a[i] = INT(a[i], ^, b[i]); break;                             \
      }                                                                        \
    return;                                                                    \
  }
#define BITS(a, o, b) ((a)o(b))
#define NOBITS(a, o, b) (a) /* the spec has no bitwise reductions of floats */
#define ISNAN(v) ((v) != (v))
#define NONAN(v) 0

static void combine(int tc, int rop, void *acc, const void *x, size_t n) {
  switch (tc) {
    case GS_I8: FOLD(int8_t, BITS, NONAN)
    case GS_I16: FOLD(int16_t, BITS, NONAN)
    case GS_I32: FOLD(int32_t, BITS, NONAN)
    case GS_I64: FOLD(int64_t, BITS, NONAN)
    case GS_U8: FOLD(uint8_t, BITS, NONAN)
    case GS_U16: FOLD(uint16_t, BITS, NONAN)
    case GS_U32: FOLD(uint32_t, BITS, NONAN)
    case GS_U64: FOLD(uint64_t, BITS, NONAN)
    case GS_F32: FOLD(float, NOBITS, ISNAN)
    default: FOLD(double, NOBITS, ISNAN)
  }
}

static size_t tc_size(int tc) {
  switch (tc) {
    case GS_I8: case GS_U8: return 1;
    case GS_I16: case GS_U16: return 2;
    case GS_I32: case GS_U32: case GS_F32: return 4;
    default: return 8;
  }
}

/* gs_reduce_static folds every member's source in member order, so every
 * PE computes the same bits, as the Go reductions do. */
int gs_reduce_static(const char *op, shmem_team_t team, int tc, int rop, void *dest, const void *src, size_t n) {
  int members = shmem_team_n_pes(team);
  if (members < 0 || shmem_team_my_pe(team) < 0) return -1;
  size_t nb = n * tc_size(tc);
  char *acc = malloc(nb ? nb : 1), *tmp = malloc(nb ? nb : 1);
  if (!acc || !tmp) gs_die("goshmem: reduction: out of memory", 1);
  const char *e0 = goshmem_last_error();
  int rc = shmem_team_sync(team);
  for (int i = 0; rc == 0 && i < members; i++) {
    gs_get(SHMEM_CTX_DEFAULT, op, i ? tmp : acc, src, nb, world_pe(team, i), 0);
    if (i) combine(tc, rop, acc, tmp, n);
  }
  if (rc == 0) rc = shmem_team_sync(team); /* every member has read every source: dest may alias it */
  rc = failed(e0, rc);
  if (rc == 0) memcpy(dest, acc, nb);
  free(acc);
  free(tmp);
  return rc;
}
