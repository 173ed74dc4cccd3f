#!/usr/bin/env bash
# Issue "the map past 6x6", point 4 (6x6 part): wall time to solution of RRR at its defaults,
# one trial on one core, as a ladder run does, set 1 6x6, RUNS seeds, the builds alternating
# run by run. One JSON line per run.
#   benches/results/rrr-6x6-median/rrr-6x6-median.sh BEFORE AFTER [RUNS] > out.jsonl          (builds "before", "after")
#   RUNS=16 benches/results/rrr-6x6-median/rrr-6x6-median.sh NAME=BIN NAME=BIN ... > out.jsonl (named builds)
set -euo pipefail
names=(); bins=()
if [[ "$1" == *=* ]]; then
  for a in "$@"; do names+=("${a%%=*}"); bins+=("${a#*=}"); done
  RUNS=${RUNS:-16}
else
  names=(before after); bins=("$1" "$2"); RUNS=${3:-16}
fi
P=${CONCUR_PUZZLES:-../shared/puzzles}/brendan_owen/pieces_set_1
for s in $(seq "$RUNS"); do
  for i in "${!bins[@]}"; do
    out=$("${bins[$i]}" solve "$P/pieces_06x06.txt" --method rrr --trials 1 --threads 1 --max-iters 10000000 --time-limit 20 --seed "$s" --json 2>/dev/null || true)
    echo "{\"build\":\"${names[$i]}\",\"seed\":$s,\"run\":${out:-null}}"
  done
done
