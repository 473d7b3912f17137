#!/usr/bin/env bash
# capi.sh: 8-byte latencies from C, goshmem's libgoshmem against Open MPI's
# OSHMEM, with the same program (capi/testdata/c/latency.c) in one run.
#
# Usage (from anywhere): bench/capi.sh        ROUNDS=5 ITERS=200000 bench/capi.sh
#                        MODES=tcp ITERS=5000 bench/capi.sh
# Needs gcc and, for the reference, Open MPI's oshcc and oshrun
# (apt-get install openmpi-bin libopenmpi-dev). Rounds alternate the two
# implementations; the table shows the median over rounds per measure.
#
# MODES (default "shm tcp"): shm runs both on one host's shared memory;
# tcp runs libgoshmem with shmemrun --network (TCP between the PEs, TLS on
# as by default) and OSHMEM with UCX_TLS=tcp (UCX's TCP transport for RMA
# and atomics; OSHMEM's barriers still go through Open MPI's shared
# memory, so its barrier rows are not a TCP figure). ITERS_TCP (default
# ITERS/20) sets the TCP runs' iterations.
# OSHMEM segfaults in shmem_finalize on these machines after its output:
# its exit status is ignored, its lines are read.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS=-mod=mod
ROUNDS=${ROUNDS:-3}
ITERS=${ITERS:-100000}
ITERS_TCP=${ITERS_TCP:-$((ITERS / 20))}
MODES=${MODES:-"shm tcp"}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

go build -o "$tmp/shmemrun" ./cmd/shmemrun
go run ./cmd/oshcc -O2 capi/testdata/c/latency.c -o "$tmp/lat_goshmem"
have_ref=0
if command -v oshcc >/dev/null && command -v oshrun >/dev/null; then
  oshcc -O2 capi/testdata/c/latency.c -o "$tmp/lat_oshmem" && have_ref=1
fi

rows() { awk -v impl="$1" -v mode="$2" '{sub(/^\[PE 0\] /, "")} /^[a-z_0-9+]+ [0-9.]+$/ {print impl, mode, $1, $2}'; }

for r in $(seq "$ROUNDS"); do
  for mode in $MODES; do
    iters=$ITERS gflags=() oenv=(env) oflags=()
    if [ "$mode" = tcp ]; then
      iters=$ITERS_TCP gflags=(--network) oenv=(env UCX_TLS=tcp) oflags=(-x UCX_TLS)
    fi
    if [ $have_ref = 1 ]; then
      ("${oenv[@]}" oshrun --allow-run-as-root --oversubscribe -np 2 "${oflags[@]}" "$tmp/lat_oshmem" "$iters" 2>/dev/null || true) |
        rows oshmem "$mode" >>"$tmp/rows"
    fi
    "$tmp/shmemrun" "${gflags[@]}" -np 2 "$tmp/lat_goshmem" "$iters" | rows goshmem "$mode" >>"$tmp/rows"
  done
done

median() { sort -g | awk '{a[NR]=$1} END {if (NR==0) print "—"; else if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
for mode in $MODES; do
  echo
  echo "| measure (2 PEs, one host, C, $mode) | libgoshmem µs | OSHMEM µs | ratio |"
  echo "|---|---:|---:|---:|"
  for m in put8+quiet get8 fetch_add8 p8 atomic_add8 pingpong8 barrier_all barrier_aset; do
    g=$(awk -v m="$m" -v t="$mode" '$1=="goshmem" && $2==t && $3==m {print $4}' "$tmp/rows" | median)
    o=$(awk -v m="$m" -v t="$mode" '$1=="oshmem" && $2==t && $3==m {print $4}' "$tmp/rows" | median)
    ratio=$(awk -v g="$g" -v o="$o" 'BEGIN { if (o+0 > 0 && g+0 >= 0) printf "%.2f", g/o; else print "—" }')
    echo "| $m | $g | $o | $ratio |"
  done
done
