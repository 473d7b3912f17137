#!/bin/sh
# metrics_cost.sh: the cost of metrics (shmem.WithMetrics) on the hot path,
# as BENCHMARKS.md reports it. It builds the root package's test binary
# once and runs BenchmarkMetrics' off and on variants of each operation
# alternately, ROUNDS times (the order flips every round), so that the
# load of a shared machine falls on both alike; it prints per operation
# the median ns/op off and on, the median of the rounds' on/off ratios,
# and allocs/op.
#
#   ROUNDS=15 ITER=2000000 bench/metrics_cost.sh
set -eu
ROUNDS=${ROUNDS:-15}
ITER=${ITER:-2000000}
OPS=${OPS:-"Put8B Get8B AtomicFetchAdd AtomicAdd Quiet Put8KiB"}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$(dirname "$0")/.."
go test -c -o "$dir/shmem.test" .
for r in $(seq "$ROUNDS"); do
	for op in $OPS; do
		modes="off on"
		[ $((r % 2)) -eq 0 ] && modes="on off"
		for m in $modes; do
			"$dir/shmem.test" -test.run '^$' -test.bench "^BenchmarkMetrics\$/^$op\$/^$m\$" \
				-test.benchtime "${ITER}x" -test.benchmem |
				awk -v r="$r" -v op="$op" -v m="$m" '/^BenchmarkMetrics/ {print r, op, m, $3, $7}'
		done
	done
done >"$dir/rows"
awk '
function median(a, n,   i, j, t) {
	for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j+1] = a[j]; a[j+1] = t }
	return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
}
{ v[$2, $3, $1] = $4; al[$2, $3] = $5; if (!($2 in seen)) { seen[$2] = 1; ops[++nops] = $2 }; if ($1 > rounds) rounds = $1 }
END {
	printf "| operation | off ns/op | on ns/op | on/off (median of %d paired rounds) | allocs/op off, on |\n|---|---:|---:|---:|---:|\n", rounds
	for (k = 1; k <= nops; k++) {
		op = ops[k]
		for (r = 1; r <= rounds; r++) { off[r] = v[op, "off", r]; on[r] = v[op, "on", r]; q[r] = on[r] / off[r] }
		printf "| %s | %.1f | %.1f | %.3f | %s, %s |\n", op, median(off, rounds), median(on, rounds), median(q, rounds), al[op, "off"], al[op, "on"]
	}
}' "$dir/rows"
