#!/usr/bin/env bash
# Reproduces the RRR figures of BENCHMARKS.md (issue: two-set RRR). Prints one JSON line per
# run, prefixed with a label. Usage: scripts/rrr-bench.sh [PUZZLE_DIR] [7x7-budget]
set -euo pipefail
cd "$(dirname "$0")/.."
P=${1:-${CONCUR_PUZZLES:-../shared/puzzles}}/brendan_owen/pieces_set_1
B7=${2:-100000}
cargo build --release -q
C=./target/release/concur
run() { local label=$1; shift; echo "$label $($C solve "$@" --json || true)"; }
# Per-trial iterations/s on one core, and the 2-core batch speed-up.
run "speed 5x5 1core"  $P/pieces_05x05.txt --method rrr --trials 64 --threads 1 --max-iters 20000 --all-trials
run "speed 8x8 1core"  $P/pieces_08x08.txt --method rrr --trials 8 --threads 1 --max-iters 2000 --all-trials
run "speed 8x8 2core"  $P/pieces_08x08.txt --method rrr --trials 8 --threads 2 --max-iters 2000 --all-trials
run "speed 16x16 1core" $P/pieces_16x16.txt --method rrr --trials 2 --threads 1 --max-iters 300 --all-trials
run "speed 16x16 2core" $P/pieces_16x16.txt --method rrr --trials 2 --threads 2 --max-iters 300 --all-trials
# Warm-started vs cold assignments inside the same runs.
run "warm 8x8"  $P/pieces_08x08.txt --method rrr --trials 4 --threads 1 --max-iters 2000 --all-trials
run "cold 8x8"  $P/pieces_08x08.txt --method rrr --trials 4 --threads 1 --max-iters 2000 --all-trials --cold-assign
run "warm 16x16" $P/pieces_16x16.txt --method rrr --trials 1 --threads 1 --max-iters 300 --all-trials
run "cold 16x16" $P/pieces_16x16.txt --method rrr --trials 1 --threads 1 --max-iters 300 --all-trials --cold-assign
# Success rate and iteration quartiles: beta sweep on 6x6, then 7x7 at the best beta.
for beta in 0.3 0.4 0.5 0.7 1.0; do
  run "sweep 6x6 beta=$beta" $P/pieces_06x06.txt --method rrr --beta $beta --trials 64 --max-iters 60000 --all-trials --seed 1
done
run "ladder 7x7 beta=0.5" $P/pieces_07x07.txt --method rrr --beta 0.5 --trials 64 --max-iters $B7 --all-trials --seed 1
