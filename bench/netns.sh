#!/usr/bin/env bash
# netns.sh: goshmem's OSU-method benchmark (cmd/shmem-perf) between two PE
# processes on two hosts, each host a network namespace, joined by a bridge.
#
# Usage (as root, from anywhere; paths are relative to the repository root):
#   bench/netns.sh                   # 3 rounds, then BENCHMARKS.md
#   ROUNDS=1 REPORT=0 bench/netns.sh # one round, CSV rows only
#
# The network follows internal/netns (net.go): namespaces gs-<pid>-<hex>-0
# and -1 are the hosts, gs-<pid>-<hex>-sw holds bridge br0; host i has eth0
# with 10.213.1.<i+1>/24, a veth whose peer p<i>l0 is a port of br0. Nothing
# is made in the root namespace, and the namespaces (with whatever still
# runs in them) are deleted on exit, however the script ends.
#
# Each round runs, alternating so drift hits both alike:
#   1. TLS on:  label tcp-hosts-tls (unique ID made with TLS)
#   2. TLS off: label tcp-hosts     (unique ID made with -notls)
#   3. TLS off, reads park at once: label tcp-hosts-park (SHMEM_BUSY_POLL=0)
# PE 0 runs in host 0 and PE 1 in host 1, started as a launcher would:
# SHMEM_RANK, SHMEM_NPES=2, SHMEM_UNIQUE_ID (made in host 0 by bench/uid
# with SHMEM_UID_SESSION_ID=10.213.1.1:0), SHMEM_HOST_ID=host<i> so the PEs
# do not count as one host and take the network path, SHMEM_TRANSPORT=tcp.
#
# Rows of earlier netns.sh runs (goshmem,tcp-hosts*) are replaced in OUT;
# every other row is kept. With REPORT=1 bench/report then rewrites
# BENCHMARKS.md and bench/plot.png as compare.sh's last step does, keeping
# compare.sh's intro (lines 3-8 of BENCHMARKS.md) and adding one line.
#
# Environment (all optional):
#   ROUNDS   rounds                               (default 3)
#   BENCHES  benches   (default put,get,atomic_fetch_add,barrier,tcp_rtt, as compare.sh's TCP runs;
#            tcp_rtt is a plain Go TCP round trip between the two hosts, the raw reference)
#   MAXSIZE  largest message in bytes             (default 1048576)
#   OUT      the raw CSV                          (default bench/results.csv)
#   NOTES    Markdown appended under the targets  (default bench/NOTES.md)
#   REPORT   1: regenerate BENCHMARKS.md          (default 1)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
ROUNDS=${ROUNDS:-3}
BENCHES=${BENCHES:-put,get,atomic_fetch_add,barrier,tcp_rtt}
MAXSIZE=${MAXSIZE:-1048576}
OUT=${OUT:-bench/results.csv}
NOTES=${NOTES:-bench/NOTES.md}
REPORT=${REPORT:-1}
header=impl,transport,bench,size_bytes,iterations,latency_us,bandwidth_MBps

if [[ $(id -u) != 0 ]]; then
    echo "netns.sh: needs root to make network namespaces" >&2
    exit 1
fi
command -v ip >/dev/null || { echo "netns.sh: needs ip(8) (apt-get install iproute2)" >&2; exit 1; }
[[ $(head -n1 "$OUT") == "$header" ]] || { echo "netns.sh: $OUT does not start with $header" >&2; exit 1; }

prefix=gs-$$-$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
sw=$prefix-sw
hosts=("$prefix-0" "$prefix-1")
tmp=$(mktemp -d)

# cleanup kills what runs in our namespaces (only this script's PEs can be
# there) and deletes them, which deletes the veths and the bridge.
cleanup() {
    local ns pid
    for ns in "${hosts[@]}" "$sw"; do
        for pid in $(ip netns pids "$ns" 2>/dev/null); do
            kill -KILL "$pid" 2>/dev/null || true
        done
        ip netns del "$ns" 2>/dev/null || true
    done
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

addr() { echo "10.213.1.$(($1 + 1))"; }

ip netns add "$sw"
ip -n "$sw" link set lo up
ip -n "$sw" link add br0 type bridge
ip -n "$sw" link set br0 up
for i in 0 1; do
    ns=${hosts[$i]}
    ip netns add "$ns"
    ip -n "$ns" link set lo up
    ip -n "$ns" link add eth0 type veth peer name "p${i}l0" netns "$sw"
    ip -n "$ns" addr add "$(addr "$i")/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$sw" link set "p${i}l0" master br0 up
done

go build -o "$tmp/shmem-perf" ./cmd/shmem-perf
go build -o "$tmp/uid" ./bench/uid
csv=$tmp/rows.csv
: >"$csv"

# pe RANK UID LABEL: start one PE in host RANK, in the background, bound to
# CPU RANK when there are two CPUs or more and its reads poll (as shmemrun's
# --bind-to auto and oshrun bind).
pe() {
    local r=$1 uid=$2 label=$3 bind=()
    if [[ $(nproc) -ge 2 && ${PE_ENV:-} != *SHMEM_BUSY_POLL=0* ]] && command -v taskset >/dev/null; then
        bind=(taskset -c "$r")
    fi
    ip netns exec "${hosts[$r]}" "${bind[@]}" env SHMEM_RANK="$r" SHMEM_NPES=2 SHMEM_UNIQUE_ID="$uid" \
        SHMEM_HOST_ID="host$r" SHMEM_TRANSPORT=tcp SHMEM_UID_SOCK_IFNAME=eth0 ${PE_ENV:-} \
        timeout 1800 "$tmp/shmem-perf" -csv -t "$label" -b "$BENCHES" -m "$MAXSIZE" -rawhost "$(addr 1)" \
        >"$tmp/pe$r.out" 2>"$tmp/pe$r.err" &
}

# run LABEL [-notls]: one 2-host run; rows appended only when both PEs
# completed.
run() {
    local label=$1 uid ok=1 p0 p1
    shift
    uid=$(ip netns exec "${hosts[0]}" env SHMEM_UID_SESSION_ID="$(addr 0):0" "$tmp/uid" "$@")
    pe 1 "$uid" "$label"
    p1=$!
    pe 0 "$uid" "$label"
    p0=$!
    wait "$p0" || ok=0
    wait "$p1" || ok=0
    if ((ok)) && grep -q '^shmem-perf: done' "$tmp/pe0.err"; then
        grep "^goshmem,$label," "$tmp/pe0.out" >>"$csv"
        echo "netns.sh: $label: $(grep -c "^goshmem,$label," "$tmp/pe0.out") rows" >&2
    else
        echo "netns.sh: $label failed; last stderr lines of PE 0 and PE 1:" >&2
        tail -n 15 "$tmp/pe0.err" "$tmp/pe1.err" >&2
        return 1
    fi
}

start=$(date +%s)
for ((r = 1; r <= ROUNDS; r++)); do
    echo "netns.sh: round $r of $ROUNDS" >&2
    run tcp-hosts-tls
    run tcp-hosts -notls
    PE_ENV=SHMEM_BUSY_POLL=0 run tcp-hosts-park -notls
done
elapsed=$(($(date +%s) - start))

# Replace earlier netns.sh rows, keep every other row.
grep -v -e '^goshmem,tcp-hosts,' -e '^goshmem,tcp-hosts-tls,' -e '^goshmem,tcp-hosts-park,' "$OUT" >"$tmp/kept.csv" || true
cat "$tmp/kept.csv" "$csv" >"$OUT"
echo "netns.sh: $(wc -l <"$csv") rows into $OUT in ${elapsed} s" >&2

if [[ $REPORT == 1 ]]; then
    sed -n 3,8p BENCHMARKS.md >"$tmp/intro.md"
    cat >>"$tmp/intro.md" <<INTRO
Rows \`tcp-hosts\`, \`tcp-hosts-tls\` and \`tcp-hosts-park\` come from \`bench/netns.sh\` (ROUNDS=$ROUNDS) on $(date -u +%Y-%m-%d): goshmem PEs on two network-namespace hosts joined by a veth bridge, TCP, TLS off, on, and off with reads that park at once (SHMEM_BUSY_POLL=0).
INTRO
    notes=()
    [[ -f $NOTES ]] && notes=(-notes "$NOTES")
    bench/report.sh -in "$OUT" -out BENCHMARKS.md -png bench/plot.png -intro "$tmp/intro.md" "${notes[@]}"
    echo "netns.sh: wrote BENCHMARKS.md, bench/plot.png" >&2
fi
