#!/usr/bin/env bash
# compare.sh: goshmem against Open MPI's OSHMEM on this machine, in one run.
#
# Usage (from anywhere; paths are relative to the repository root):
#   bench/compare.sh                 # 3 rounds, writes the files below
#   ROUNDS=5 bench/compare.sh        # more rounds, steadier medians
#
# Each round runs, alternating implementations so drift hits both alike:
#   1. OSHMEM over UCX shared memory     (bench/oshmem/run.sh, TRANSPORTS=shm)
#   2. goshmem over udma, 2 processes    (cmd/shmem-perf)
#   3. OSHMEM with UCX_TLS=tcp, loopback (bench/oshmem/run.sh, TRANSPORTS=tcp)
#   4. goshmem over TCP loopback, TLS on  (SHMEM_TRANSPORT=tcp; label tcp-tls)
#   5. goshmem over TCP loopback, TLS off (SHMEM_TRANSPORT=tcp; label tcp)
#   6. the same with reads that park at once (SHMEM_BUSY_POLL=0; label tcp-park)
#      instead of polling first, as goshmem's default and OSHMEM's UCX do
# then BW_ROUNDS short rounds of the shared-memory put alone (both
# implementations, the first of the pair alternating), which add samples to
# the put rows: the 64 KiB-4 MiB bandwidth rows move by up to 2x between
# runs a minute apart on a shared VM, and the bandwidth target takes the
# worst of seven sizes, so five samples a size are too few; then
# LONG_ROUNDS rounds of the same put with LONG_ITERS timed puts a size
# instead of OSU's 100 (labels udma-long and shm-long, their own rows in
# the report: OSU's short windows after a barrier are where goshmem
# trails at 64-256 KiB, and these say whether a long stream does); then
# bench/copyref, the copy routines alone in one process (transport.Copy
# against the C library's memcpy, interleaved every few milliseconds);
# then collects every row in bench/results.csv and runs bench/report, which
# writes BENCHMARKS.md (medians over rounds, ratios, targets, the copyref
# table) and bench/plot.png.
#
# Environment (all optional):
#   ROUNDS       rounds                                   (default 3)
#   BW_ROUNDS    put-only shared-memory rounds after them  (default 20)
#   LONG_ROUNDS  put-only rounds with long windows after those (default 6)
#   LONG_ITERS   timed puts a size in those rounds         (default 2000)
#   BENCHES      benches of the shared-memory runs         (default all)
#   MAXSIZE      largest message of the shared-memory runs (default 4194304)
#   TCP_BENCHES  benches of the TCP runs   (default put,get,atomic_fetch_add,barrier)
#                goshmem's TCP runs add tcp_rtt, plain Go TCP round trips of 8 bytes
#                between the same two processes: tcp_rtt_poll with reads that poll as
#                goshmem's lanes do (the raw reference of the targets, same mode) and
#                tcp_rtt with reads that park at once (listed for comparison); the TLS
#                run adds tls_bw_ceiling, 1 MiB sealed (AES-128-GCM) by PE 0 and opened
#                by PE 1 in goshmem's record size on a plain Go TCP connection, polling
#                alike: what the two cores allow a TLS put, beside the 3x OSHMEM goal
#   TCP_MAXSIZE  largest message of the TCP runs           (default 1048576)
#   NOTES        Markdown appended under the targets       (default bench/NOTES.md)
#   OUT          the raw CSV                               (default bench/results.csv)
#
# The TCP runs are cut to four benches and 1 MiB by default: a loopback
# round trip costs 20-200 µs and the OSU method does 11000 of them per small
# size, so all benches at 4 MiB over TCP would take about half an hour per
# round. With the defaults a run takes about 10 minutes on 2 cores; set
# TCP_BENCHES=all TCP_MAXSIZE=4194304 for the full set.
#
# OSHMEM (openmpi-bin, libopenmpi-dev) is installed by run.sh when missing.
# goshmem PEs are started by shmem-perf -np 2, which makes a loopback unique
# ID and launches the processes (SHMEM_RANK/SHMEM_NPES/SHMEM_UNIQUE_ID).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
ROUNDS=${ROUNDS:-3}
BW_ROUNDS=${BW_ROUNDS:-20}
LONG_ROUNDS=${LONG_ROUNDS:-6}
LONG_ITERS=${LONG_ITERS:-2000}
BENCHES=${BENCHES:-all}
MAXSIZE=${MAXSIZE:-4194304}
TCP_BENCHES=${TCP_BENCHES:-put,get,atomic_fetch_add,barrier}
TCP_MAXSIZE=${TCP_MAXSIZE:-1048576}
NOTES=${NOTES:-bench/NOTES.md}
OUT=${OUT:-bench/results.csv}
header=impl,transport,bench,size_bytes,iterations,latency_us,bandwidth_MBps

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
go build -o "$tmp/shmem-perf" ./cmd/shmem-perf
csv=$tmp/all.csv
echo "$header" >"$csv"

# goshmem LABEL ARGS...: one 2-process shmem-perf run; rows appended only
# when it completed.
goshmem() {
    local label=$1
    shift
    if timeout 1800 "$tmp/shmem-perf" -np 2 -csv "$@" >"$tmp/g.out" 2>"$tmp/g.err" &&
        grep -q '^shmem-perf: done' "$tmp/g.err"; then
        grep "^goshmem,$label," "$tmp/g.out" >>"$csv"
        echo "compare.sh: goshmem $label: $(grep -c "^goshmem,$label," "$tmp/g.out") rows" >&2
    else
        echo "compare.sh: goshmem $label failed; last stderr lines:" >&2
        tail -n 15 "$tmp/g.err" >&2
        return 1
    fi
}

start=$(date +%s)
for ((r = 1; r <= ROUNDS; r++)); do
    echo "compare.sh: round $r of $ROUNDS" >&2
    TRANSPORTS=shm BENCHES=$BENCHES MAXSIZE=$MAXSIZE bench/oshmem/run.sh "$csv"
    goshmem udma -b "$BENCHES" -m "$MAXSIZE"
    TRANSPORTS=tcp BENCHES=$TCP_BENCHES MAXSIZE=$TCP_MAXSIZE bench/oshmem/run.sh "$csv"
    SHMEM_TRANSPORT=tcp goshmem tcp-tls -b "$TCP_BENCHES,tcp_rtt,tls_bw_ceiling" -m "$TCP_MAXSIZE"
    SHMEM_TRANSPORT=tcp goshmem tcp -notls -b "$TCP_BENCHES,tcp_rtt" -m "$TCP_MAXSIZE"
    SHMEM_TRANSPORT=tcp SHMEM_BUSY_POLL=0 goshmem tcp-park -notls -t tcp-park -b "$TCP_BENCHES,tcp_rtt" -m "$TCP_MAXSIZE"
done
# OSHMEM's processes copy with glibc's memcpy under run.sh's tunables;
# copyref's reference must be that same memcpy.
tunables=()
[[ ${OSHMEM_REP_MOVSB:-0} == 1 ]] || tunables=(env GLIBC_TUNABLES=glibc.cpu.x86_rep_movsb_threshold=1073741824)
for ((r = 1; r <= BW_ROUNDS; r++)); do
    echo "compare.sh: put round $r of $BW_ROUNDS" >&2
    if ((r % 2)); then
        goshmem udma -b put -m "$MAXSIZE"
        TRANSPORTS=shm BENCHES=put MAXSIZE=$MAXSIZE bench/oshmem/run.sh "$csv"
    else
        TRANSPORTS=shm BENCHES=put MAXSIZE=$MAXSIZE bench/oshmem/run.sh "$csv"
        goshmem udma -b put -m "$MAXSIZE"
    fi
done
# long_goshmem, long_oshmem: one put run with LONG_ITERS timed puts a size.
long_goshmem() { goshmem udma-long -t udma-long -iters "$LONG_ITERS" -b put -m "$MAXSIZE"; }
long_oshmem() {
    LABEL=shm-long ITERS=$LONG_ITERS TRANSPORTS=shm BENCHES=put MAXSIZE=$MAXSIZE bench/oshmem/run.sh "$csv"
}
for ((r = 1; r <= LONG_ROUNDS; r++)); do
    echo "compare.sh: long put round $r of $LONG_ROUNDS" >&2
    if ((r % 2)); then
        long_goshmem
        long_oshmem
    else
        long_oshmem
        long_goshmem
    fi
done
go build -o "$tmp/copyref" ./bench/copyref
# copyref's smallest size is 64 KiB unless MAXSIZE is smaller (a quick
# MAXSIZE=8 run: copyref refused -min above -max and the run ended there).
"${tunables[@]}" "$tmp/copyref" -min $((MAXSIZE < 65536 ? MAXSIZE : 65536)) -max "$MAXSIZE" >"$tmp/copyref.md"
elapsed=$(($(date +%s) - start))
cp "$csv" "$OUT"

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
cat >"$tmp/intro.md" <<INTRO
Produced by \`bench/compare.sh\` (ROUNDS=$ROUNDS, BW_ROUNDS=$BW_ROUNDS, LONG_ROUNDS=$LONG_ROUNDS, LONG_ITERS=$LONG_ITERS, BENCHES=$BENCHES, MAXSIZE=$MAXSIZE,
TCP_BENCHES=$TCP_BENCHES, TCP_MAXSIZE=$TCP_MAXSIZE) on $(date -u +%Y-%m-%d) in ${elapsed} s,
on a machine with $(nproc) cores ($cpu), $(go version | cut -d' ' -f3), Open MPI
$(oshrun --version 2>/dev/null | head -n1 | grep -o '[0-9][0-9.]*' || echo '?') OSHMEM over UCX$([[ ${OSHMEM_REP_MOVSB:-0} == 1 ]] && echo ', glibc as installed' || echo ", glibc's REP MOVSB off (see bench/oshmem/run.sh: on this EPYC it runs at 3 GB/s for OSHMEM's 4-256 KiB puts)").
2 PEs, each a process; rounds alternate OSHMEM and goshmem runs. Raw rows: \`$OUT\`.
Every section after the copy table is \`$NOTES\`, copied in: edit it there, since each run rewrites this file.
INTRO
{
    echo "## The copy alone (bench/copyref)"
    echo
    echo "transport.Copy, the copy of every same-host put and get, against the C library's memcpy"
    echo "(the one OSHMEM's processes run, with the same GLIBC_TUNABLES) and Go's copy, in one process"
    echo "on two shared mappings: medians over rounds of each round's ratio, the routines interleaved"
    echo "every few milliseconds (higher is faster)."
    echo
    cat "$tmp/copyref.md"
    echo
    if [[ -f $NOTES ]]; then cat "$NOTES"; fi
} >"$tmp/notes.md"
notes=(-notes "$tmp/notes.md")
bench/report.sh -in "$OUT" -out BENCHMARKS.md -png bench/plot.png -intro "$tmp/intro.md" "${notes[@]}"
echo "compare.sh: wrote $OUT, BENCHMARKS.md, bench/plot.png in ${elapsed} s" >&2
