#!/usr/bin/env bash
# ab.sh: paired rounds of shmem-perf builds against OSHMEM's put, the
# method behind bench/NOTES.md's A/B figures (session 12: the copy routine,
# the passive PE's wait).
#
# Usage (from anywhere):
#   git worktree add /tmp/before REV && (cd /tmp/before && go build -o /tmp/before.bin ./cmd/shmem-perf)
#   go build -o /tmp/after.bin ./cmd/shmem-perf
#   bench/ab.sh /tmp/before.bin /tmp/after.bin
#
# Each round runs OSHMEM's osu (bench/oshmem/osu.c, glibc's REP MOVSB off as
# in run.sh) and every build once, 2 PEs over shared memory, -b put, in an
# order shuffled per round. For each size of at least MINSIZE and each
# build it prints the median over rounds of the round's bandwidth ratio
# build / OSHMEM (higher is faster): pairing within a round cancels the
# host's drift, which moves absolute GB/s by up to 2x within minutes.
#
# Environment (all optional):
#   ROUNDS   rounds                                      (default 30)
#   MAXSIZE  largest message                             (default 524288)
#   MINSIZE  smallest size reported                      (default 32768)
#   ITERS    timed puts a size (osu -i, shmem-perf -iters; default OSU's rule)
set -euo pipefail

(($# >= 1)) || {
    echo "usage: bench/ab.sh SHMEM_PERF_BINARY..." >&2
    exit 2
}
root=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${ROUNDS:-30}
MAXSIZE=${MAXSIZE:-524288}
MINSIZE=${MINSIZE:-32768}
ITERS=${ITERS:-}
bins=("$@")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
oshcc -O2 -o "$tmp/osu" "$root/bench/oshmem/osu.c"
rows=$tmp/rows # build index (0: OSHMEM),size,MB/s,round

# one I R: run build I (0: OSHMEM) in round R, appending its put rows.
one() {
    local i=$1 r=$2
    if ((i == 0)); then
        env -u UCX_TLS GLIBC_TUNABLES=glibc.cpu.x86_rep_movsb_threshold=1073741824 \
            oshrun --allow-run-as-root --oversubscribe -np 2 -x GLIBC_TUNABLES \
            "$tmp/osu" -t shm -b put -m "$MAXSIZE" ${ITERS:+-i "$ITERS"} 2>/dev/null || true
    else
        "${bins[i - 1]}" -np 2 -csv -b put -m "$MAXSIZE" ${ITERS:+-iters "$ITERS"} 2>/dev/null || true
    fi | awk -F, -v i="$i" -v r="$r" -v min="$MINSIZE" \
        '($1 == "oshmem" || $1 == "goshmem") && $3 == "put" && $4 >= min {print i "," $4 "," $7 "," r}' >>"$rows"
}

for ((r = 1; r <= ROUNDS; r++)); do
    echo "ab.sh: round $r of $ROUNDS" >&2
    for i in $(shuf -e $(seq 0 ${#bins[@]})); do
        one "$i" "$r"
    done
done

# Ratios per round where both sides have a row, then the median per size
# and build.
awk -F, '
    { bw[$1 "," $2 "," $4] = $3; sizes[$2] = 1; rounds[$4] = 1; if ($1 > n) n = $1 }
    END {
        for (s in sizes) for (i = 1; i <= n; i++) for (r in rounds) {
            o = bw[0 "," s "," r]; g = bw[i "," s "," r]
            if (o > 0 && g > 0) print s, i, g / o
        }
    }' "$rows" | sort -k1,1n -k2,2n -k3,3g | awk -v names="${bins[*]}" '
    BEGIN { split(names, name, " ") }
    function flush() {
        if (c == 0) return
        m = (c % 2) ? v[(c + 1) / 2] : (v[c / 2] + v[c / 2 + 1]) / 2
        printf "%8d  %-40s %6.3f  (%d rounds)\n", ps, name[pi], m, c
        c = 0
    }
    { if ($1 != ps || $2 != pi) { flush(); ps = $1; pi = $2 } v[++c] = $3 }
    END { flush() }'
