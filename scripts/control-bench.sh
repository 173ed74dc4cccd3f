#!/usr/bin/env bash
# Reproduces the backtracker figures of BENCHMARKS.md (one core). One JSON line per run,
# prefixed with a label. Usage: scripts/control-bench.sh [PUZZLE_DIR] [8x8 seconds]
set -euo pipefail
cd "$(dirname "$0")/.."
P=${1:-${CONCUR_PUZZLES:-../shared/puzzles}}/brendan_owen/pieces_set_1
T8=${2:-240}
cargo build --release -q
C=./target/release/concur
run() { local label=$1; shift; echo "$label $($C "$@" || true)"; }
# Time and nodes to the first solution, each propagation, two seeds.
for ac in fc ac3 ac2001 ac4; do
  for seed in 1 2; do
    run "first 7x7 $ac seed=$seed" solve $P/pieces_07x07.txt --method backtrack --ac $ac --seed $seed --time-limit 120 --json
  done
done
run "first 8x8 ac4 mrv-degree" solve $P/pieces_08x08.txt --method backtrack --ac ac4 --seed 1 --time-limit $T8 --json
# Complete enumeration of set 1 6x6 under each propagation: the same tree for AC-3, AC-2001
# and AC-4 (the same fixed points), different times.
for ac in fc ac3 ac2001 ac4; do
  run "count 6x6 $ac" count $P/pieces_06x06.txt --ac $ac --order scan --json
done
