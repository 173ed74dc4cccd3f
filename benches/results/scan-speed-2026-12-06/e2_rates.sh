#!/bin/bash
# e2_rates.sh SECONDS: nodes/s on the official 16x16 with its five clue pieces (eternity2.dev's
# CC0 v00 file keeping its first five hints, the official clues), peer then new then old scan,
# one run each on one core (CORE), seed 1; one line per run.
set -u
T=$1; core=${CORE:-0}; WORK=${WORK:-/tmp/cmp}; mkdir -p $WORK
PEERS=${PEERS:-/tmp/peers2}; ROOT=${CONCUR_PUZZLES:-/work/shared/puzzles}
J=$WORK/e2_16x16_official_5hints.json
python3 -c "
import json, sys
d = json.load(open('$ROOT/eternity2_dev_cc0/e2-16x16-v00.json'))
d['hints'] = d['hints'][:5]; d['name'] = 'e2-16x16-5-clues'
json.dump(d, open('$J', 'w'))"
load=$(cut -d' ' -f1 /proc/loadavg)
out=$(taskset -c $core $PEERS/target_16x16/release/run_dfs_codegen_jit --puzzle $J --opt native --chain2 --seed 1 --budget-s $T 2>/dev/null | grep '^RESULT')
echo "solver=peer puzzle=e2-16x16-5-clues $(echo "$out" | tr ' ' '\n' | grep -E '^(nodes|nps|elapsed_s|score)=' | tr '\n' ' ')core=$core load=$load"
for b in new old; do
  bin=$NEW; [ $b = old ] && bin=$OLD
  load=$(cut -d' ' -f1 /proc/loadavg)
  taskset -c $core $bin solve $J --method scan --threads 1 --seed 1 --time-limit $T --json 2>/dev/null | python3 -c "
import json, sys
r = json.load(sys.stdin)
print('solver=scan-$b puzzle=e2-16x16-5-clues nodes=%d nps=%d search_s=%.3f solved=%s core=$core load=$load' % (r['nodes'], r['nodes_per_s'], r['wall_s'] - r.get('setup_s', 0), r['solved']))"
done
