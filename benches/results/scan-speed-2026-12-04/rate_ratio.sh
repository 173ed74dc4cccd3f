#!/bin/bash
# rate_ratio.sh SECONDS REPS: the scan's nodes/s per core with the table walker (the oracle,
# the walker before this change) and the fast walker, alternated on one core (CORE) in one
# run, set 1 7x7 / 8x7 / 8x8, seeds 101..100+REPS; one JSON line per run with the load.
set -u
T=$1; R=$2; CONCUR=${CONCUR:?}; P=${PUZ:-/work/shared/puzzles/brendan_owen/pieces_set_1}
for size in 07x07 08x07 08x08; do
  for rep in $(seq 1 $R); do
    for wk in table fast; do
      load=$(cut -d' ' -f1 /proc/loadavg)
      taskset -c ${CORE:-1} $CONCUR solve $P/pieces_$size.txt --method scan --threads 1 --seed $((100 + rep)) \
        --time-limit $T --scan-walker $wk --json 2>/dev/null | python3 -c "
import json, sys
r = json.load(sys.stdin)
print(json.dumps({'puzzle': 'set1-$size', 'walker': '$wk', 'seed': $((100 + rep)), 'nodes': r['nodes'],
  'search_s': round(r['wall_s'] - r['setup_s'], 3), 'nodes_per_s': round(r['nodes_per_s']), 'solved': r['solved'], 'load_before': $load}))"
    done
  done
done
