#!/bin/bash
# Issue "a workspace that shows the house": the instructions of one solve per method, before
# and after a change that should leave the engine's code as it was (the crate split), counted
# by cachegrind (the same deterministic run under each binary: one thread, fixed limits and
# seed; a generated 6x6). One JSON line a (binary, method), appended to OUT.
#   BEFORE=/path/to/old/concur AFTER=target/release/concur OUT=/tmp/instructions.jsonl \
#     bash benches/results/workspace-2026-12-07/instructions.sh
set -eu
D=$(cd "$(dirname "$0")" && pwd); OUT=${OUT:-$D/instructions.jsonl}
TMP=$(mktemp -d); "$AFTER" generate --width 6 --height 6 --seed 1 -o "$TMP/p.txt" >/dev/null
CASES=(
  "rrr|--method rrr --trials 2 --max-iters 20000 --backend cpu"
  "dm|--method dm --trials 2 --max-iters 20000 --backend cpu"
  "dc|--method dc --trials 2 --max-iters 3000 --backend cpu"
  "backtrack|--method backtrack --max-nodes 2000000"
  "scan|--method scan --max-nodes 2000000"
  "hill|--method hill --max-iters 2000000"
  "alns|--method alns --max-iters 20000"
  "beam|--method beam --width 4096 --polish 0"
)
for case in "${CASES[@]}"; do
  IFS='|' read -r method flags <<< "$case"
  for which in BEFORE AFTER; do
    bin=${!which}
    # shellcheck disable=SC2086
    ir=$(taskset -c "${CORE:-0}" valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$bin" solve "$TMP/p.txt" $flags --threads 1 --seed 1 --json 2>&1 >/dev/null | sed -n 's/.*I *refs: *\([0-9,]*\).*/\1/p' | tr -d ,)
    python3 -c "import json,sys; print(json.dumps(dict(method=sys.argv[1], binary=sys.argv[2], version=sys.argv[3], instructions=int(sys.argv[4]), command='valgrind --tool=cachegrind --cache-sim=no concur solve p.txt '+sys.argv[5]+' --threads 1 --seed 1 --json')))" \
      "$method" "$which" "$("$bin" --version)" "$ir" "$flags" >> "$OUT"
  done
done
rm -rf "$TMP"
