#!/bin/bash
# scan_run.sh SIZE SEED CAP_S: one run of concur's scan (CONCUR: the binary) on set 1 SIZE, one
# thread on one core (CORE); one line; a solution is checked with `concur verify`.
set -u
WORK=${WORK:-/tmp/cmp}; mkdir -p $WORK
size=$1; seed=$2; cap=$3; core=${CORE:-1}
P=${PUZ:-/work/shared/puzzles/brendan_owen/pieces_set_1}; CONCUR=${CONCUR:?}
load=$(cut -d' ' -f1 /proc/loadavg)
sol=$WORK/scan_${size}_$seed.sol
j=$(taskset -c $core $CONCUR solve $P/pieces_$size.txt --method scan --threads 1 --seed $seed --time-limit $cap --json -o $sol ${SCAN_ARGS:-} 2>/dev/null)
echo "$j" | python3 -c "
import json,sys
r=json.load(sys.stdin); s=r['wall_s']-r.get('setup_s',0)
st='solved' if r['solved'] else 'unsolved'
print('solver=scan puzzle=set1-$size seed=$seed status=%s search_s=%.3f nodes=%d nps=%d setup_s=%.3f restarts=%d wall_s=%.3f cap_s=$cap core=$core load=$load' % (st, s, r['nodes'], r['nodes_per_s'], r.get('setup_s',0), r['restarts'], r['wall_s']))"
if [ -f $sol ] && echo "$j" | grep -q "\"solved\": *true" && ! $CONCUR verify $P/pieces_$size.txt $sol >/dev/null 2>&1; then echo "BAD scan solution $size $seed"; fi
