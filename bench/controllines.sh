#!/usr/bin/env bash
# controllines.sh [COMMIT]: the non-test Go lines of goshmem's control plane
# at COMMIT (default HEAD), for the before/after record in CHANGELOG.md
# (issue 10). Before the control lane (0d35f80) the control code lived in
# world/ and rode protoactor's remote layer; now it is internal/world's
# control files and its control lane.
set -euo pipefail
cd "$(dirname "$0")/.."
c=${1:-HEAD}
count() { # lines of the non-test .go files whose path matches $1
  local n=0 f
  for f in $(git ls-tree -r --name-only "$c" | grep -E '\.go$' | grep -v '_test\.go$' | grep -E "$1" || true); do
    n=$((n + $(git show "$c:$f" | wc -l)))
  done
  echo "$n"
}
echo "commit $(git rev-parse --short "$c")"
echo "messages and actor glue (actors/, internal/actorsys/): $(count '^(actors/|internal/actorsys/)')"
echo "world's control files:                                  $(count '^(internal/)?world/(control|controlconns|grpcauth|exitaware|exit|flood|rankzero)\.go$')"
echo "control lane:                                           $(count '^(internal/)?world/internal/lane/')"
# team/split.go is the team actor's split decision only once team/actor.go
# exists; before, it was the split itself.
actors='^(pe|heap|team)/actor\.go$'
git cat-file -e "$c:team/actor.go" 2>/dev/null && actors="$actors|^team/split\.go$"
echo "actor state machines (pe, heap, team):                  $(count "$actors")"
