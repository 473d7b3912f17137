/*
 * osu.c: the OSU OpenSHMEM micro-benchmark method, run against Open MPI's
 * OSHMEM so goshmem can be compared with it on the same machine.
 *
 * Build:  oshcc -O2 osu.c -o osu
 * Run:    oshrun --allow-run-as-root --oversubscribe -np 2 ./osu -t shm
 * Flags:  -t transport   label written to the transport column (default shm)
 *         -b b1,b2,...   benches or groups to run (default all; see BENCHES)
 *         -m maxsize     largest message in bytes (default 4 MiB)
 *
 * Output: CSV on stdout from PE 0 only, header
 *   impl,transport,bench,size_bytes,iterations,latency_us,bandwidth_MBps
 * MB is 10^6 bytes. bandwidth is 0 where it does not apply. For collectives
 * size_bytes is the per-PE message size.
 *
 * Open MPI 4.1.4 has no OpenSHMEM 1.5 teams, so the collectives use the
 * active-set API over all PEs with pSync arrays; int64 atomics use the
 * `long` routines (64 bits on the LP64 targets this runs on).
 */
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SMALL_LIMIT 8192         /* bytes (p2p) or elements (collectives) */
#define P2P_SKIP 1000
#define P2P_ITERS 10000
#define P2P_SKIP_LARGE 10
#define P2P_ITERS_LARGE 100
#define COLL_SKIP 200
#define COLL_ITERS 1000
#define COLL_SKIP_LARGE 10
#define COLL_ITERS_LARGE 100
#define MR_WINDOW 500            /* puts per size before the one quiet */
#define MR_SKIP 50
#define MAX_PES 256

static const char *BENCHES[] = {
    "put", "get", "put_nb", "get_nb", "put_mr",
    "atomic_fetch_add", "atomic_add", "atomic_compare_swap", "atomic_swap",
    "atomic_fetch", "atomic_set", "atomic_inc", "atomic_fetch_inc",
    "barrier", "broadcast", "fcollect", "reduce", "reduce_f64", NULL};

/* Group names accepted by -b, each expanding to a prefix of bench names. */
static const char *GROUPS[][2] = {
    {"atomics", "atomic_"}, {"all", ""}, {NULL, NULL}};

static int me, npes;
static int iters_set;                 /* -i: timed p2p count at every size */
static const char *transport = "shm";
static char *s_buf, *r_buf;           /* symmetric, maxsize*npes each */
static long *atom;                    /* symmetric int64 target */
static double *times;                 /* symmetric, one slot per PE */
static long psync[2][SHMEM_REDUCE_SYNC_SIZE > SHMEM_COLLECT_SYNC_SIZE
                         ? SHMEM_REDUCE_SYNC_SIZE
                         : SHMEM_COLLECT_SYNC_SIZE];
static long *wrk_l;                   /* symmetric reduce work arrays */
static double *wrk_d;

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void row(const char *bench, size_t size, int iters, double lat_us,
                double bw) {
    if (me == 0)
        printf("oshmem,%s,%s,%zu,%d,%.4f,%.2f\n", transport, bench, size,
               iters, lat_us, bw);
    fflush(stdout);
}

/* mean_over_pes gathers each PE's value at PE 0 and returns their mean there. */
static double mean_over_pes(double v) {
    shmem_barrier_all(); /* PE 0 has finished reading the previous round */
    shmem_double_p(&times[me], v, 0);
    shmem_barrier_all();
    double sum = 0;
    for (int i = 0; i < npes; i++) sum += times[i];
    return sum / npes;
}

static double sum_over_pes(double v) { return mean_over_pes(v) * npes; }

/* p2p_counts applies the OSU rule (skip, loop, skip_large and loop_large
 * of osu_oshm_put.c): many warm-ups and iterations for small messages,
 * 10 warm-ups and 100 iterations for large ones; -i replaces the timed
 * count at every size, as shmem-perf's -iters does. */
static void p2p_counts(size_t size, int *skip, int *iters) {
    *skip = size <= SMALL_LIMIT ? P2P_SKIP : P2P_SKIP_LARGE;
    *iters = iters_set ? iters_set : size <= SMALL_LIMIT ? P2P_ITERS : P2P_ITERS_LARGE;
}

enum p2p_kind { PUT, GET, PUT_NB, GET_NB };

/* bench_p2p: PE 0 drives, PE 1 is passive; each iteration is one complete
 * operation (blocking get, or put/nbi followed by quiet). */
static void bench_p2p(const char *name, enum p2p_kind kind, size_t max) {
    for (size_t size = 1; size <= max; size *= 2) {
        int skip, iters;
        p2p_counts(size, &skip, &iters);
        memset(s_buf, (int)(size & 0x7f) | 1, size);
        shmem_barrier_all();
        double t0 = 0, t1;
        if (me == 0) {
            for (int i = 0; i < skip + iters; i++) {
                if (i == skip) t0 = now_us();
                switch (kind) {
                case PUT: shmem_putmem(r_buf, s_buf, size, 1); shmem_quiet(); break;
                case GET: shmem_getmem(r_buf, s_buf, size, 1); break;
                case PUT_NB: shmem_putmem_nbi(r_buf, s_buf, size, 1); shmem_quiet(); break;
                case GET_NB: shmem_getmem_nbi(r_buf, s_buf, size, 1); shmem_quiet(); break;
                }
            }
            t1 = now_us();
            double lat = (t1 - t0) / iters;
            row(name, size, iters, lat, size / lat);
        }
        shmem_barrier_all();
        /* The data must have arrived: put lands on PE 1, get on PE 0. */
        int checker = (kind == PUT || kind == PUT_NB) ? 1 : 0;
        if (me == checker && (r_buf[0] != s_buf[0] || r_buf[size - 1] != s_buf[0]))
            fprintf(stderr, "osu: %s size %zu: data mismatch on PE %d\n", name, size, me);
    }
}

/* bench_put_mr: PE i < npes/2 streams MR_WINDOW puts to i+npes/2, then one
 * quiet. latency is the senders' mean time per put; bandwidth the sum of the
 * senders' rates times the size. */
static void bench_put_mr(size_t max) {
    int half = npes / 2;
    for (size_t size = 1; size <= max; size *= 2) {
        double per_put = 0, rate_bw = 0;
        shmem_barrier_all();
        if (me < half) {
            for (int i = 0; i < MR_SKIP; i++) shmem_putmem(r_buf, s_buf, size, me + half);
            shmem_quiet();
            double t0 = now_us();
            for (int i = 0; i < MR_WINDOW; i++) shmem_putmem(r_buf, s_buf, size, me + half);
            shmem_quiet();
            per_put = (now_us() - t0) / MR_WINDOW;
            rate_bw = size / per_put;
        }
        shmem_barrier_all();
        double lat = sum_over_pes(per_put) / half;
        double bw = sum_over_pes(rate_bw);
        row("put_mr", size, MR_WINDOW, lat, bw);
    }
}

enum atomic_kind { FADD, ADD, CSWAP, SWAP, FETCH, SET, INC, FINC };

/* bench_atomic: PE 0 targets PE 1's int64; each call is blocking or, for the
 * non-fetching ones, followed by nothing (as in OSU: they complete at quiet,
 * which the trailing barrier provides). */
static void bench_atomic(const char *name, enum atomic_kind kind) {
    volatile long sink = 0;
    *atom = 0;
    shmem_barrier_all();
    if (me == 0) {
        double t0 = 0;
        for (int i = 0; i < P2P_SKIP + P2P_ITERS; i++) {
            if (i == P2P_SKIP) t0 = now_us();
            switch (kind) {
            case FADD: sink += shmem_long_atomic_fetch_add(atom, 1, 1); break;
            case ADD: shmem_long_atomic_add(atom, 1, 1); break;
            case CSWAP: sink += shmem_long_atomic_compare_swap(atom, 0, 0, 1); break;
            case SWAP: sink += shmem_long_atomic_swap(atom, i, 1); break;
            case FETCH: sink += shmem_long_atomic_fetch(atom, 1); break;
            case SET: shmem_long_atomic_set(atom, i, 1); break;
            case INC: shmem_long_atomic_inc(atom, 1); break;
            case FINC: sink += shmem_long_atomic_fetch_inc(atom, 1); break;
            }
        }
        double lat = (now_us() - t0) / P2P_ITERS;
        row(name, sizeof(long), P2P_ITERS, lat, 0);
    }
    shmem_barrier_all();
    (void)sink;
}

static void bench_barrier(void) {
    shmem_barrier_all();
    double t = 0;
    for (int i = 0; i < COLL_SKIP + COLL_ITERS; i++) {
        double t0 = now_us();
        shmem_barrier_all();
        if (i >= COLL_SKIP) t += now_us() - t0;
    }
    double lat = mean_over_pes(t / COLL_ITERS);
    row("barrier", 0, COLL_ITERS, lat, 0);
}

enum coll_kind { BCAST, FCOLLECT, REDUCE_I64, REDUCE_F64 };

/* bench_coll: every PE times only the collective call, alternating pSync
 * arrays and re-synchronising with an untimed barrier, as OSU does. */
static void bench_coll(const char *name, enum coll_kind kind, size_t max) {
    for (size_t size = 8; size <= max; size *= 2) {
        size_t n = size / 8;
        int skip = n <= SMALL_LIMIT ? COLL_SKIP : COLL_SKIP_LARGE;
        int iters = n <= SMALL_LIMIT ? COLL_ITERS : COLL_ITERS_LARGE;
        double t = 0;
        shmem_barrier_all();
        for (int i = 0; i < skip + iters; i++) {
            long *ps = psync[i & 1];
            double t0 = now_us();
            switch (kind) {
            case BCAST: shmem_broadcast64(r_buf, s_buf, n, 0, 0, 0, npes, ps); break;
            case FCOLLECT: shmem_fcollect64(r_buf, s_buf, n, 0, 0, npes, ps); break;
            case REDUCE_I64:
                shmem_long_sum_to_all((long *)r_buf, (long *)s_buf, (int)n, 0, 0,
                                      npes, wrk_l, ps);
                break;
            case REDUCE_F64:
                shmem_double_sum_to_all((double *)r_buf, (double *)s_buf, (int)n, 0, 0,
                                        npes, wrk_d, ps);
                break;
            }
            if (i >= skip) t += now_us() - t0;
            shmem_barrier_all();
        }
        double lat = mean_over_pes(t / iters);
        row(name, size, iters, lat, 0);
    }
}

/* wanted reports whether bench was selected by the comma list sel. */
static int wanted(const char *sel, const char *bench) {
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", sel);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        if (strcmp(tok, bench) == 0) return 1;
        for (int g = 0; GROUPS[g][0]; g++)
            if (strcmp(tok, GROUPS[g][0]) == 0 &&
                strncmp(bench, GROUPS[g][1], strlen(GROUPS[g][1])) == 0)
                return 1;
    }
    return 0;
}

static int known(const char *sel) {
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", sel);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        int ok = 0;
        for (int i = 0; BENCHES[i]; i++) ok |= strcmp(tok, BENCHES[i]) == 0;
        for (int g = 0; GROUPS[g][0]; g++) ok |= strcmp(tok, GROUPS[g][0]) == 0;
        if (!ok) return 0;
    }
    return 1;
}

int main(int argc, char **argv) {
    const char *sel = "all";
    long max = 4L << 20;
    int opt;
    while ((opt = getopt(argc, argv, "t:b:m:i:h")) != -1) {
        switch (opt) {
        case 't': transport = optarg; break;
        case 'b': sel = optarg; break;
        case 'm': max = strtol(optarg, NULL, 0); break;
        case 'i': iters_set = (int)strtol(optarg, NULL, 0); break;
        default:
            fprintf(stderr, "usage: %s [-t transport] [-b bench,...] [-m maxsize] [-i iters]\n", argv[0]);
            return 2;
        }
    }
    if (max < 8 || max > (1L << 30) || iters_set < 0 || iters_set > 10000000 || !known(sel)) {
        fprintf(stderr, "osu: bad -m or -i, or unknown bench in -b %s\n", sel);
        return 2;
    }

    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    if (npes < 2 || npes % 2 != 0 || npes > MAX_PES) {
        if (me == 0) fprintf(stderr, "osu: needs an even number of PEs, 2..%d\n", MAX_PES);
        shmem_finalize();
        return 2;
    }
    size_t bufsz = (size_t)max * npes;
    s_buf = shmem_malloc(bufsz);
    r_buf = shmem_malloc(bufsz);
    atom = shmem_malloc(sizeof(long));
    times = shmem_malloc(sizeof(double) * npes);
    size_t nwrk = (size_t)max / 8 / 2 + 1 + SHMEM_REDUCE_MIN_WRKDATA_SIZE;
    wrk_l = shmem_malloc(nwrk * sizeof(long));
    wrk_d = shmem_malloc(nwrk * sizeof(double));
    if (!s_buf || !r_buf || !atom || !times || !wrk_l || !wrk_d) {
        fprintf(stderr, "osu: PE %d: shmem_malloc failed (raise SHMEM_SYMMETRIC_SIZE)\n", me);
        shmem_global_exit(1);
    }
    memset(s_buf, 1, bufsz);
    memset(r_buf, 0, bufsz);
    for (size_t i = 0; i < sizeof psync / sizeof psync[0][0]; i++)
        (&psync[0][0])[i] = SHMEM_SYNC_VALUE;
    shmem_barrier_all();

    if (me == 0)
        printf("impl,transport,bench,size_bytes,iterations,latency_us,bandwidth_MBps\n");
    if (wanted(sel, "put")) bench_p2p("put", PUT, max);
    if (wanted(sel, "get")) bench_p2p("get", GET, max);
    if (wanted(sel, "put_nb")) bench_p2p("put_nb", PUT_NB, max);
    if (wanted(sel, "get_nb")) bench_p2p("get_nb", GET_NB, max);
    if (wanted(sel, "put_mr")) bench_put_mr(max);
    static const char *anames[] = {"atomic_fetch_add", "atomic_add", "atomic_compare_swap",
                                   "atomic_swap", "atomic_fetch", "atomic_set",
                                   "atomic_inc", "atomic_fetch_inc"};
    for (int k = FADD; k <= FINC; k++)
        if (wanted(sel, anames[k])) bench_atomic(anames[k], (enum atomic_kind)k);
    if (wanted(sel, "barrier")) bench_barrier();
    if (wanted(sel, "broadcast")) bench_coll("broadcast", BCAST, max);
    if (wanted(sel, "fcollect")) bench_coll("fcollect", FCOLLECT, max);
    if (wanted(sel, "reduce")) bench_coll("reduce", REDUCE_I64, max);
    if (wanted(sel, "reduce_f64")) bench_coll("reduce_f64", REDUCE_F64, max);

    shmem_barrier_all();
    if (me == 0) fprintf(stderr, "osu: done\n");
    fflush(stdout);
    shmem_finalize();
    return 0;
}
