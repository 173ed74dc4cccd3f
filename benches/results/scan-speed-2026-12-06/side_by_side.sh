#!/bin/bash
# side_by_side.sh CAP_S SEEDS SIZE...: for each size of set 1 and seed 1..SEEDS, on one core
# (CORE), one run of the eternity2.dev codegen peer, then concur's scan as built now (NEW), then
# the scan before this change (OLD); each capped at CAP_S s, one line per run, every solution
# checked with `concur verify`. The run scripts are those of ../scan-speed-2026-12-04/.
set -u
D=$(cd "$(dirname "$0")" && pwd); S=$D/../scan-speed-2026-12-04
cap=$1; seeds=$2; shift 2
for size in "$@"; do
  for s in $(seq 1 $seeds); do
    CONCUR=$NEW $S/peer_run.sh $size $s $cap
    CONCUR=$NEW $S/scan_run.sh $size $s $cap | sed 's/^solver=scan/solver=scan-new/'
    CONCUR=$OLD $S/scan_run.sh $size $s $cap | sed 's/^solver=scan/solver=scan-old/'
  done
done
echo "# done $(date -u +%FT%TZ)"
