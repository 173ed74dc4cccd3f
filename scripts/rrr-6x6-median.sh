#!/usr/bin/env bash
# Issue "the map past 6x6", point 4 (6x6 part): wall time to solution of RRR at its defaults,
# one trial on one core, as a ladder run does, set 1 6x6, RUNS seeds, two builds alternating.
# One JSON line per run. Usage: scripts/rrr-6x6-median.sh BEFORE AFTER [RUNS] > out.jsonl
set -euo pipefail
BEFORE=$1; AFTER=$2; RUNS=${3:-16}
P=${CONCUR_PUZZLES:-../shared/puzzles}/brendan_owen/pieces_set_1
for s in $(seq "$RUNS"); do
  for b in before after; do
    bin=$BEFORE; [ $b = after ] && bin=$AFTER
    out=$($bin solve "$P/pieces_06x06.txt" --method rrr --trials 1 --threads 1 --max-iters 10000000 --time-limit 20 --seed "$s" --json 2>/dev/null || true)
    echo "{\"build\":\"$b\",\"seed\":$s,\"run\":${out:-null}}"
  done
done
