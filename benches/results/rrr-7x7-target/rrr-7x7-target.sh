#!/usr/bin/env bash
# Issue "the map past 6x6", point 4: RRR at its defaults on set 1 7x7, two threads, 120 s,
# one run per seed; one JSON line per run (appended, so that a cut run can be resumed by
# passing the seeds still missing). PUZZLE (default set 1's 7x7) names another instance.
# Usage: [PUZZLE=p.txt] benches/results/rrr-7x7-target/rrr-7x7-target.sh OUT.jsonl [SEEDS...]
set -euo pipefail
OUT=$1; shift
SEEDS=${*:-1 2 3 4 5}
P=${CONCUR_PUZZLES:-../shared/puzzles}/brendan_owen/pieces_set_1
C=${CONCUR:-./target/release/concur}
PUZZLE=${PUZZLE:-$P/pieces_07x07.txt}
for s in $SEEDS; do
  out=$($C solve "$PUZZLE" --method rrr --threads 2 --time-limit 120 --seed "$s" --json 2>/dev/null || true)
  echo "{\"puzzle\":\"$PUZZLE\",\"seed\":$s,\"run\":${out:-null}}" >> "$OUT"
done
