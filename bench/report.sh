#!/usr/bin/env bash
# report.sh runs bench/report, which lives in its own module (gonum/plot is a
# dependency of this tool, not of the library), with every path argument
# made absolute first because the tool runs from its own directory.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
args=()
for a in "$@"; do
    case $a in
        -*) args+=("$a") ;;
        /*) args+=("$a") ;;
        *) args+=("$(pwd)/$a") ;;
    esac
done
cd "$root/bench/report" && exec go run . "${args[@]}"
