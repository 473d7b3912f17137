#!/usr/bin/env bash
# latab.sh: paired rounds of latency programs over TCP (2 PEs, one host),
# the method behind BENCHMARKS.md's "Tried and not landed" and "TCP on
# oversubscribed cores" tables.
#
# Usage (from anywhere): bench/latab.sh NAME=SHMEMRUN:PROGRAM...
#   git worktree add /tmp/before REV
#   (cd /tmp/before && go build -o /tmp/b_run ./cmd/shmemrun && go build -o /tmp/b_go ./bench/latency &&
#    go run ./cmd/oshcc -O2 capi/testdata/c/latency.c -o /tmp/b_c)
#   (build /tmp/a_run, /tmp/a_go, /tmp/a_c the same way in this tree)
#   LOAD=2 bench/latab.sh base=/tmp/b_run:/tmp/b_c new=/tmp/a_run:/tmp/a_c
#
# Each round runs every build once, and OSHMEM over UCX's TCP (oshcc and
# oshrun of Open MPI, when installed) with capi/testdata/c/latency.c, in an
# order shuffled per round; a build is `shmemrun --network -np 2 PROGRAM
# ITERS` (latency.c through oshcc, or bench/latency: the same lines). It
# prints each measure's median per build and, against the first build, the
# median over rounds of the round's ratio: pairing within a round cancels
# the host's drift, which moves a TCP round trip by 20-40% within minutes.
#
# Environment (all optional):
#   ROUNDS  rounds                                        (default 8)
#   ITERS   the programs' iterations                      (default 5000)
#   LOAD    CPU-bound processes run beside the rounds     (default 0)
set -euo pipefail

(($# >= 1)) || {
    echo "usage: bench/latab.sh NAME=SHMEMRUN:PROGRAM..." >&2
    exit 2
}
root=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${ROUNDS:-8}
ITERS=${ITERS:-5000}
LOAD=${LOAD:-0}

tmp=$(mktemp -d)
loads=()
cleanup() {
    for p in "${loads[@]}"; do kill "$p" 2>/dev/null || true; done
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

names=()
for arg in "$@"; do
    names+=("${arg%%=*}")
done
if command -v oshcc >/dev/null && command -v oshrun >/dev/null; then
    oshcc -O2 "$root/capi/testdata/c/latency.c" -o "$tmp/osh"
    names+=(oshmem)
fi
for ((i = 0; i < LOAD; i++)); do
    sh -c 'while :; do :; done' &
    loads+=($!)
done

rows() { sed 's/^\[PE 0\] //' | awk -v b="$1" -v r="$2" '/^[a-z_0-9+]+ [0-9.]+$/ {print r, b, $1, $2}'; }
for r in $(seq "$ROUNDS"); do
    for k in $(seq 0 $((${#names[@]} - 1)) | shuf); do
        name=${names[$k]}
        if [ "$name" = oshmem ] && [ "$k" -ge $# ]; then
            (UCX_TLS=tcp oshrun --allow-run-as-root --oversubscribe -np 2 -x UCX_TLS "$tmp/osh" "$ITERS" 2>/dev/null || true) |
                rows oshmem "$r" >>"$tmp/rows"
            continue
        fi
        spec=${@:$((k + 1)):1}
        spec=${spec#*=}
        "${spec%%:*}" --network -np 2 "${spec#*:}" "$ITERS" 2>/dev/null | rows "$name" "$r" >>"$tmp/rows" || true
    done
done

# Medians per build, and of the per-round ratios to the first build.
awk -v list="${names[*]}" '
    function median(a, n,    i, j, t) {
        for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
        return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
    }
    { v[$3, $2, $1] = $4; if (!($3 in seen)) { seen[$3] = 1; order[++nm] = $3 } }
    END {
        nb = split(list, b, " ")
        printf "| measure |"; for (i = 1; i <= nb; i++) printf " %s µs |", b[i]
        for (i = 2; i <= nb; i++) printf " %s/%s |", b[i], b[1]; print ""
        printf "|---|"; for (i = 1; i < 2 * nb; i++) printf "---:|"; print ""
        for (m = 1; m <= nm; m++) {
            me = order[m]; printf "| %s |", me
            for (i = 1; i <= nb; i++) {
                n = 0; for (r = 1; r <= '"$ROUNDS"'; r++) if ((me, b[i], r) in v) x[++n] = v[me, b[i], r]
                if (n) printf " %.2f |", median(x, n); else printf " — |"
            }
            for (i = 2; i <= nb; i++) {
                n = 0; for (r = 1; r <= '"$ROUNDS"'; r++) if ((me, b[i], r) in v && (me, b[1], r) in v && v[me, b[1], r] > 0) x[++n] = v[me, b[i], r] / v[me, b[1], r]
                if (n) printf " %.2f |", median(x, n); else printf " — |"
            }
            print ""
        }
    }' "$tmp/rows"
