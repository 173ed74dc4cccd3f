#!/usr/bin/env bash
# Propagation folded into divide and concur (issue "the map past 6x6", the three-weight
# lever): the hybrid layout with and without `--propagate TAU`, the issue's protocol: 64
# trials on one core, a fixed wall-clock budget for the batch, the same seeds for every arm.
# One JSON line per (puzzle, arm) appended to OUT (the `solve --json` report plus the arm);
# an arm already in OUT is skipped, so a rerun resumes.
#
#   scripts/propagate-bench.sh OUT SECONDS PUZZLE "none 0.5 0.9 ..."
set -euo pipefail
OUT=${1:?usage: $0 OUT SECONDS PUZZLE ARMS}
SECS=$2; PUZZLE=$3; ARMS=$4
BIN=${CONCUR:-target/release/concur}
name=$(basename "$PUZZLE" .txt)
for arm in $ARMS; do
  if [ -s "$OUT" ] && grep -q "\"puzzle\":\"$name\",\"arm\":\"$arm\"" "$OUT"; then continue; fi
  args=()
  [ "$arm" != none ] && args=(--propagate "$arm")
  rep=$("$BIN" solve "$PUZZLE" --method dc --hybrid --trials 64 --all-trials --threads 1 --seed 1 \
        --time-limit "$SECS" --json "${args[@]}" 2>/dev/null || true)
  echo "{\"puzzle\":\"$name\",\"arm\":\"$arm\",\"seconds\":$SECS,\"report\":$rep}" >> "$OUT"
  echo "$name $arm: $(echo "$rep" | head -c 200)" >&2
done
