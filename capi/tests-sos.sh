#!/usr/bin/env bash
# tests-sos.sh: runs the C unit tests of the OpenSHMEM test suite
# (openshmem-org/tests-sos, the suite Sandia OpenSHMEM ships) against
# goshmem's C API, on shared memory and over TCP. The suite is not part of
# this repository: pass a checkout of it.
#
# Usage (from anywhere):
#   git clone https://github.com/openshmem-org/tests-sos /tmp/tests-sos
#   capi/tests-sos.sh /tmp/tests-sos          # 2 and 4 PEs, shm and TCP
#   NPS="2 3" capi/tests-sos.sh /tmp/tests-sos
#
# Every test/unit/*.c is compiled with oshcc; those that do not compile are
# listed (the C++ and Fortran tests are not tried). Each compiled test runs
# under shmemrun with every PE count of NPS, once on one host's shared
# memory and once with --network (TCP between every PE, statics included),
# with a 180 s timeout (spam takes about 80 s on 4 PEs over TCP on 2
# cores, too close to the 90 s this used to allow). It prints one line per
# failed run, then a count.
#
# Known, on 2026-12-06 (121 of the 123 C tests compile, and every run of
# them passes but one test's):
#   shmem_team_b2b_collectives fails: its collect and alltoall
#     destinations hold 10 longs, not 10 per PE; goshmem refuses the
#     overflow, which other implementations let run into the next object.
#   c11_shmem_test_all_any_some and c11_shmem_wait_until_all_any_some do
#     not compile: they pass short arrays to the _all/_any/_some generics,
#     for which OpenSHMEM 1.5 has no short routines (short is deprecated
#     for point-to-point synchronization).
# (mt_lock.c is mt_lock_test's second file, compiled with it.)
set -uo pipefail

(($# == 1)) || {
    echo "usage: capi/tests-sos.sh TESTS-SOS-CHECKOUT" >&2
    exit 2
}
suite=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
NPS=${NPS:-"2 4"}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

(cd "$root" && go build -o "$work/oshcc" ./cmd/oshcc && go build -o "$work/shmemrun" ./cmd/shmemrun) || exit 1

built=0
for src in "$suite"/test/unit/*.c; do
    name=$(basename "$src" .c)
    srcs=("$src")
    case $name in
    mt_lock) continue ;;                             # mt_lock_test's second file
    mt_lock_test) srcs+=("$suite/test/unit/mt_lock.c") ;;
    esac
    if "$work/oshcc" -O1 -std=gnu11 -D_GNU_SOURCE -I"$suite/test/include" -I"$suite/test/unit" -o "$work/$name" "${srcs[@]}" -lpthread -lm >"$work/$name.cc" 2>&1; then
        built=$((built + 1))
    else
        echo "does not compile: $name: $(grep -m1 error "$work/$name.cc")"
        rm -f "$work/$name"
    fi
done

runs=0 failed=0
for np in $NPS; do
    for mode in shm network; do
        flags=()
        [[ $mode == network ]] && flags=(--network)
        for prog in "$work"/*; do
            [[ -x $prog && ! -d $prog && $prog != "$work/oshcc" && $prog != "$work/shmemrun" ]] || continue
            runs=$((runs + 1))
            if ! timeout 180 "$work/shmemrun" "${flags[@]}" -np "$np" "$prog" >"$work/out" 2>&1; then
                failed=$((failed + 1))
                echo "FAIL $(basename "$prog") -np $np $mode: $(tail -n 1 "$work/out")"
            fi
        done
    done
done
echo "tests-sos: $built tests compiled; $failed of $runs runs failed"
((failed == 0))
