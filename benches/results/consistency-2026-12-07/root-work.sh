#!/bin/bash
# Every rung of the consistency ladder on the same position, the root's full domains, with its
# counters (`concur count --root-work`): a generated 4x4 with three inner colours (the seed's
# toy has three colours too), set 1's 5x5 to 8x8 and the official 16x16 (v00 of the
# eternity2.dev instances). One JSON line a puzzle and rung, appended to root-work.jsonl.
#   CONCUR=target/release/concur PUZZLES=../shared/puzzles bash root-work.sh
set -eu
D=$(cd "$(dirname "$0")" && pwd); OUT=${OUT:-$D/root-work.jsonl}
CONCUR=${CONCUR:-concur}; PUZZLES=${PUZZLES:-../shared/puzzles}; CORE=${CORE:-0}
toy=$(mktemp --suffix=.txt)
$CONCUR generate --width 4 --height 4 --frame-colors 2 --inner-colors 3 --seed 1 -o "$toy" >/dev/null
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)
for spec in "4x4 toy|$toy|concur generate --width 4 --height 4 --frame-colors 2 --inner-colors 3 --seed 1" \
    "5x5|$PUZZLES/brendan_owen/pieces_set_1/pieces_05x05.txt|" "6x6|$PUZZLES/brendan_owen/pieces_set_1/pieces_06x06.txt|" \
    "7x7|$PUZZLES/brendan_owen/pieces_set_1/pieces_07x07.txt|" "8x8|$PUZZLES/brendan_owen/pieces_set_1/pieces_08x08.txt|" \
    "16x16|$PUZZLES/eternity2_dev_cc0/e2-16x16-v00.json|"; do
  IFS='|' read -r name path made <<< "$spec"
  shown=${path#"$PUZZLES/"}; [ -n "$made" ] && shown="(made by: $made)"
  taskset -c "$CORE" "$CONCUR" count "$path" --root-work --json | python3 -c "
import json, sys
for r in json.load(sys.stdin):
    r.update(puzzle=sys.argv[1], command='concur count ' + sys.argv[2] + ' --root-work --json', cpu=sys.argv[3])
    print(json.dumps(r))" "$name" "$shown" "$cpu" >> "$OUT"
done
rm -f "$toy"
