#!/usr/bin/env bash
# Reproduces the backtracker and completion figures of BENCHMARKS.md. One JSON line per run,
# prefixed with a label. Usage: scripts/control-bench.sh [PUZZLE_DIR] [8x8 seconds]
set -euo pipefail
cd "$(dirname "$0")/.."
P=${1:-${CONCUR_PUZZLES:-../shared/puzzles}}/brendan_owen/pieces_set_1
T8=${2:-300}
cargo build --release -q
C=./target/release/concur
run() { local label=$1; shift; echo "$label $($C "$@" || true)"; }
# Time and nodes to the first solution, one core, each propagation (7x7: three seeds).
for ac in fc ac3 ac2001 ac4; do
  for seed in 1 2 3; do
    run "first 7x7 $ac seed=$seed" solve $P/pieces_07x07.txt --method backtrack --ac $ac --seed $seed --time-limit 120 --json
  done
done
run "first 8x8 ac4 dom-wdeg" solve $P/pieces_08x08.txt --method backtrack --ac ac4 --order dom-wdeg --seed 1 --time-limit $T8 --json
# Complete enumeration (counts) of set 1 6x6 under each propagation: the same tree sizes for
# AC-3, AC-2001 and AC-4 (they reach the same fixed points), different times.
for ac in fc ac3 ac2001 ac4; do
  run "count 6x6 $ac" count $P/pieces_06x06.txt --ac $ac --order scan --json
done
# RRR with and without arc-consistent completion, 64 trials each.
for size in 05x05 06x06 07x07; do
  it=20000
  run "rrr $size plain" solve $P/pieces_$size.txt --method rrr --beta 0.5 --trials 64 --max-iters $it --all-trials --seed 1 --json
  run "rrr $size complete" solve $P/pieces_$size.txt --method rrr --beta 0.5 --trials 64 --max-iters $it --all-trials --seed 1 --complete 4 --json
done
