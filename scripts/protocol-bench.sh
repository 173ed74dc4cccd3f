#!/usr/bin/env bash
# The lever protocol of the issue "the map past 6x6": 64 trials on one core, one wall-clock
# budget for the batch, every trial run out (`--all-trials`), the same seeds in every arm.
# Each arm is NAME=ARGS (the method and its options for `concur solve`). One JSON line per
# (puzzle, arm) is appended to OUT: the `solve --json` report with the arm and its arguments.
# An arm already in OUT is skipped, so a rerun resumes.
#
#   scripts/protocol-bench.sh OUT SECONDS PUZZLE "default=--method rrr" "uniform=--method rrr --join-weights 1,1,1"
set -euo pipefail
OUT=${1:?usage: $0 OUT SECONDS PUZZLE NAME=ARGS...}
SECS=$2; PUZZLE=$3; shift 3
BIN=${CONCUR:-target/release/concur}
name=$(basename "$PUZZLE" .txt)
for spec in "$@"; do
  arm=${spec%%=*}; args=${spec#*=}
  if [ -s "$OUT" ] && grep -q "\"puzzle\":\"$name\",\"arm\":\"$arm\"" "$OUT"; then continue; fi
  # shellcheck disable=SC2086
  rep=$("$BIN" solve "$PUZZLE" $args --trials 64 --all-trials --threads 1 --seed 1 \
        --time-limit "$SECS" --json 2>/dev/null || true)
  echo "{\"puzzle\":\"$name\",\"arm\":\"$arm\",\"seconds\":$SECS,\"args\":\"$args\",\"report\":${rep:-null}}" >> "$OUT"
  echo "$name $arm: $(echo "$rep" | head -c 200)" >&2
done
