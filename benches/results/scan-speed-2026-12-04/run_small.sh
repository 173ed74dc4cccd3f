#!/bin/bash
# run_small.sh CAP_S SEEDS SIZE...: for each size and seed 1..SEEDS, one peer run then one scan run
# on the same core (CORE), each capped at CAP_S s; one line per run, the load before each run.
set -u
D=$(cd "$(dirname "$0")" && pwd)
cap=$1; seeds=$2; shift 2
for size in "$@"; do
  for s in $(seq 1 $seeds); do
    $D/peer_run.sh $size $s $cap
    $D/scan_run.sh $size $s $cap
  done
done
echo "# done $(date -u +%FT%TZ)"
