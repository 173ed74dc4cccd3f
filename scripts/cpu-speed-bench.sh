#!/usr/bin/env bash
# RRR and divide-and-concur iterations per second on one core, two builds side by side:
# the runs alternate between BEFORE and AFTER (ROUNDS rounds), so that both see the same
# machine load. One JSON line per run, with its label, build and the solver's JSON.
# Usage: scripts/cpu-speed-bench.sh BEFORE_BINARY AFTER_BINARY [PUZZLE_DIR] > out.jsonl
set -euo pipefail
BEFORE=$1; AFTER=$2
P=${3:-${CONCUR_PUZZLES:-../shared/puzzles}}/brendan_owen/pieces_set_1
ROUNDS=${ROUNDS:-3}
# The dc rows ran the plain layout, then dc's default. Since the hybrid layout became the
# default (2026-12-01), builds from then on need DC_LAYOUT="--layout plain" for the same rows.
# Set 1's 5x5 is solved within ~1,000 iterations, so its runs time mostly set-up. Its twin
# with one inner side recoloured (the last piece's left side 7 -> 6, so two colours occur an
# odd number of times and no board matches everywhere) keeps the map iterating at steady state.
U=$(mktemp -d)/unsolvable_05x05.txt
sed '$ s/^6 7 7 7$/6 7 7 6/' "$P/pieces_05x05.txt" > "$U"
cmp -s "$U" "$P/pieces_05x05.txt" && { echo "the 5x5 twin was not made" >&2; exit 2; }
run() {
  local label=$1 build=$2 bin=$3; shift 3
  # An unsolved run exits 1 and still prints its JSON.
  local out; out=$($bin solve "$@" --json 2>/dev/null || true)
  echo "{\"label\":\"$label\",\"build\":\"$build\",\"run\":${out:-null}}"
}
for r in $(seq "$ROUNDS"); do
  for b in before after; do
    bin=$BEFORE; [ $b = after ] && bin=$AFTER
    run "rrr 5x5" $b "$bin" "$P/pieces_05x05.txt" --method rrr --trials 64 --threads 1 --max-iters 20000 --all-trials --seed $r
    run "rrr 5x5 twin" $b "$bin" "$U" --method rrr --trials 4 --threads 1 --max-iters 50000 --all-trials --seed $r
    run "rrr 7x7" $b "$bin" "$P/pieces_07x07.txt" --method rrr --trials 4 --threads 1 --max-iters 20000 --all-trials --seed $r
    run "rrr 8x8" $b "$bin" "$P/pieces_08x08.txt" --method rrr --trials 4 --threads 1 --max-iters 10000 --all-trials --seed $r
    run "rrr 16x16" $b "$bin" "$P/pieces_16x16.txt" --method rrr --trials 1 --threads 1 --max-iters 1000 --all-trials --seed $r
    run "dc 5x5" $b "$bin" "$P/pieces_05x05.txt" --method dc ${DC_LAYOUT:-} --trials 16 --threads 1 --max-iters 20000 --all-trials --seed $r
    run "dc 8x8" $b "$bin" "$P/pieces_08x08.txt" --method dc ${DC_LAYOUT:-} --trials 4 --threads 1 --max-iters 5000 --all-trials --seed $r
  done
done
