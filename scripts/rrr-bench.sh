#!/usr/bin/env bash
# Reproduces the map figures of BENCHMARKS.md. One JSON line per run, prefixed with a label.
# Usage: scripts/rrr-bench.sh [PUZZLE_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
P=${1:-${CONCUR_PUZZLES:-../shared/puzzles}}/brendan_owen/pieces_set_1
cargo build --release -q
C=./target/release/concur
run() { local label=$1; shift; echo "$label $($C solve "$@" --json || true)"; }
# Per-trial iterations/s on one core.
run "speed 5x5 1core"   $P/pieces_05x05.txt --method rrr --trials 64 --threads 1 --max-iters 20000 --all-trials
run "speed 8x8 1core"   $P/pieces_08x08.txt --method rrr --trials 8 --threads 1 --max-iters 2000 --all-trials
run "speed 16x16 1core" $P/pieces_16x16.txt --method rrr --trials 2 --threads 1 --max-iters 300 --all-trials
# Warm-started vs cold assignments inside the same runs.
for s in 05x05 08x08 16x16; do
  it=2000; [ $s = 16x16 ] && it=300
  run "warm $s" $P/pieces_$s.txt --method rrr --trials 4 --threads 1 --max-iters $it --all-trials --no-cycle-restart --seed 9
  run "cold $s" $P/pieces_$s.txt --method rrr --trials 4 --threads 1 --max-iters $it --all-trials --no-cycle-restart --seed 9 --cold-assign
done
# 7x7 at the best beta of the 6x6 sweep (see BENCHMARKS.md for the sweep's command).
run "rrr 7x7 beta=0.7" $P/pieces_07x07.txt --method rrr --beta 0.7 --trials 64 --threads 1 --max-iters 30000 --all-trials --seed 1
# With and without arc-consistent completion, 64 trials each.
for s in 05x05 06x06 07x07; do
  run "rrr $s plain"    $P/pieces_$s.txt --method rrr --beta 0.7 --trials 64 --threads 1 --max-iters 10000 --all-trials --seed 1
  run "rrr $s complete" $P/pieces_$s.txt --method rrr --beta 0.7 --trials 64 --threads 1 --max-iters 10000 --all-trials --seed 1 --complete 4
done
# Divide and concur, 64 trials, the two best variants.
for s in 06x06 07x07; do
  run "dc $s hybrid" $P/pieces_$s.txt --method dc --hybrid --trials 64 --threads 1 --max-iters 20000 --all-trials --seed 1
  run "dc $s plain"  $P/pieces_$s.txt --method dc --layout plain --trials 64 --threads 1 --max-iters 20000 --all-trials --seed 1
done
# Divide and concur with adaptive weights, 64 trials.
for s in 06x06 07x07; do
  run "dc $s adaptive hybrid" $P/pieces_$s.txt --method dc --weights adaptive --hybrid --trials 64 --threads 1 --max-iters 20000 --all-trials --seed 1
  run "dc $s adaptive plain"  $P/pieces_$s.txt --method dc --layout plain --weights adaptive --trials 64 --threads 1 --max-iters 20000 --all-trials --seed 1
done
