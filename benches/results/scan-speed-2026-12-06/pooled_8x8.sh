#!/bin/bash
# pooled_8x8.sh SOLVER CAP_S SEED... : runs of one solver (peer: the eternity2.dev codegen row
# scan; scan: concur's, NEW the binary) on set 1 8x8, one core (CORE), CAP_S seconds each, one
# line a run, every solution checked with `concur verify` (the run scripts of
# ../scan-speed-2026-12-04/). Two of these, one per core at the same time, give the issue's
# "pooled core-seconds per solution, at most one core-hour per side": total search seconds over
# solutions, every run counted, solved or not.
set -u
D=$(cd "$(dirname "$0")" && pwd); S=$D/../scan-speed-2026-12-04
solver=$1; cap=$2; shift 2
for s in "$@"; do
  case $solver in
    peer) CONCUR=$NEW $S/peer_run.sh 08x08 $s $cap;;
    scan) CONCUR=$NEW $S/scan_run.sh 08x08 $s $cap | sed 's/^solver=scan/solver=scan-new/';;
  esac
done
echo "# $solver done $(date -u +%FT%TZ)"
