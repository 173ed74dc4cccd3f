#!/bin/bash
# run_8x8.sh CAP_PER_RUN TOTAL_CAP_S: set 1 8x8, alternating one peer run and one scan run (seed s
# for both), each capped at CAP_PER_RUN s, until TOTAL_CAP_S of search time is spent; one line per run.
set -u
D=$(cd "$(dirname "$0")" && pwd)
cap=$1; total=$2; t0=$(date +%s); s=1
while [ $(( $(date +%s) - t0 + cap * 2 )) -le $total ]; do
  echo "# $(date -u +%FT%TZ) uptime: $(uptime)"
  $D/peer_run.sh 08x08 $s $cap
  $D/scan_run.sh 08x08 $s $cap
  s=$((s + 1))
done
echo "# done $(date -u +%FT%TZ)"
