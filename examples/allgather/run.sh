#!/bin/bash
# run.sh mirrors CANN SHMEM's examples/allgather/run.sh on goshmem: golden
# data, N processes meeting at one address, result.csv.
#
#   examples/allgather/run.sh [-pes N] [-type int32_t|float16_t|bfloat16_t]
#       [-ipport tcp://ip:port] [-gnpus G] [-fpe F] [-fnpu X] [-tool msprof]
#       [-iters K] [-workdir DIR]
#
# Every process gets only SHMEM_UID_SESSION_ID (the -ipport address) and
# its rank (SHMEM_RANK=fpe+i, SHMEM_NPES=pes), as CANN SHMEM's processes
# do. Say how the world is secured before running it:
#   SHMEM_JOB_SECRET=<same secret for every process>   TLS on
#   SMEM_CONF_STORE_TLS_ENABLE=0                       TLS off
# With neither every process stops with an error saying so. -fnpu and
# -tool are accepted for CANN SHMEM's command lines and have no effect
# (no NPUs, no msprof: each process times itself). -iters is goshmem's:
# allgathers per size, the first 10 untimed (default 50, CANN's PERF_TIME).
# -workdir is goshmem's too: where golden/ and result.csv go (default this
# script's directory, as CANN SHMEM's script writes them), so two runs of
# one checkout at once can each have their own. The program is built into
# build/ here either way: go build skips the link when it is up to date,
# and replaces it by a rename when not, so concurrent runs share it.
set -u
CURRENT_DIR=$(pwd)
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" &>/dev/null && pwd)
PROJECT_ROOT=$(dirname "$(dirname "$SCRIPT_DIR")")

PE_SIZE=2
IPPORT="tcp://127.0.0.1:8899"
GNPU_NUM=""
FIRST_PE=0
TEST_TYPE="int32_t"
ITERS=50
WORK_DIR="$SCRIPT_DIR"

need() { [ -n "${2:-}" ] || { echo "Error: $1 requires a value." >&2; exit 1; }; }
while [[ $# -gt 0 ]]; do
    case "$1" in
        -ipport) need "$1" "${2:-}"; IPPORT="$2"; shift 2 ;;
        -pes)    need "$1" "${2:-}"; PE_SIZE="$2"; shift 2 ;;
        -fpe)    need "$1" "${2:-}"; FIRST_PE="$2"; shift 2 ;;
        -gnpus)  need "$1" "${2:-}"; GNPU_NUM="$2"; shift 2 ;;
        -fnpu)   need "$1" "${2:-}"; shift 2 ;;
        -type)   need "$1" "${2:-}"; TEST_TYPE="$2"; shift 2 ;;
        -tool)   need "$1" "${2:-}"; shift 2 ;;
        -iters)  need "$1" "${2:-}"; ITERS="$2"; shift 2 ;;
        -workdir) need "$1" "${2:-}"; WORK_DIR="$2"; shift 2 ;;
        *) echo "Error: Unknown option $1." >&2; exit 1 ;;
    esac
done
# As in CANN SHMEM: this host starts gnpus processes, at most pes.
if [[ -z "$GNPU_NUM" || "$GNPU_NUM" -gt "$PE_SIZE" ]]; then
    GNPU_NUM="$PE_SIZE"
fi
SESSION="${IPPORT#tcp://}"
if [[ "$SESSION" == "$IPPORT" ]]; then
    echo "Error: -ipport wants tcp://ip:port, got $IPPORT." >&2
    exit 1
fi

BIN="$SCRIPT_DIR/build/allgather"
mkdir -p "$SCRIPT_DIR/build" "$WORK_DIR" && cd "$WORK_DIR" || exit 1
(cd "$PROJECT_ROOT" && go build -o "$BIN" ./examples/allgather) || exit 1

# Golden generate
rm -rf ./golden
"$BIN" -gen-golden ./golden -pes "$PE_SIZE" -type "$TEST_TYPE" || exit 1

# Allgather test: PE FIRST_PE+idx of PE_SIZE, for each local index.
rm -f result.csv
export SHMEM_UID_SESSION_ID="$SESSION"
pids=()
for (( idx = 0; idx < GNPU_NUM; idx++ )); do
    SHMEM_RANK=$((FIRST_PE + idx)) SHMEM_NPES="$PE_SIZE" \
        "$BIN" -type "$TEST_TYPE" -iters "$ITERS" -golden ./golden -out result.csv &
    pids+=("$!")
done

ret=0
for pid in "${pids[@]}"; do
    wait "$pid"
    cur_ret=$?
    echo "process $pid done: exit status $cur_ret"
    if [[ $cur_ret -ne 0 ]]; then
        ret=$cur_ret
    fi
done

cd "$CURRENT_DIR" || exit 1
exit $ret
