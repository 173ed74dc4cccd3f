#!/bin/bash
# The rotation-table measurement (docs/consistency.md): AC-3 revising by the engine's colour
# masks, candidate by candidate ("derive"), and through the rotation table ("table"). For each
# puzzle and way: the search's nodes, revisions, removals and seconds (three runs, core 0),
# and the instructions of one run under cachegrind; one JSON line each, appended to OUT.
#   cargo build --release --example revise
#   REVISE=target/release/examples/revise PUZZLES=../shared/puzzles OUT=/tmp/rotation.jsonl \
#     bash benches/results/consistency-2026-12-07/rotation.sh
set -eu
D=$(cd "$(dirname "$0")" && pwd); OUT=${OUT:-$D/rotation.jsonl}
REVISE=${REVISE:-target/release/examples/revise}; PZ=${PUZZLES:-../shared/puzzles}
# puzzle | node limit (empty: count every solution) | cachegrind's node limit
CASES=("$PZ/brendan_owen/pieces_set_1/pieces_06x05.txt||" "$PZ/brendan_owen/pieces_set_1/pieces_06x06.txt|2000000|100000" "$PZ/eternity2_dev_cc0/e2-16x16-v00.json|200000|20000")
for case in "${CASES[@]}"; do
  IFS='|' read -r puzzle nodes cg <<< "$case"
  for way in masks derive table; do
    for run in 1 2 3; do
      taskset -c 0 "$REVISE" "$puzzle" "$way" $nodes | python3 -c "import json,sys; j=json.loads(sys.stdin.read()); j.update(run=int(sys.argv[1]), cpu=sys.argv[2], command=sys.argv[3]); print(json.dumps(j))" \
        "$run" "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)" "revise $puzzle $way $nodes" >> "$OUT"
    done
    cg_nodes=${cg:-$nodes}
    ir=$(valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$REVISE" "$puzzle" "$way" $cg_nodes 2>&1 >/dev/null | sed -n 's/.*I *refs: *\([0-9,]*\).*/\1/p' | tr -d ,)
    python3 -c "import json,sys; print(json.dumps(dict(puzzle=sys.argv[1], revise=sys.argv[2], cachegrind_nodes=sys.argv[3] or None, instructions=int(sys.argv[4]), command='valgrind --tool=cachegrind --cache-sim=no revise '+' '.join(sys.argv[1:4]))))" \
      "$puzzle" "$way" "$cg_nodes" "$ir" >> "$OUT"
  done
done
