#!/usr/bin/env bash
# Propagation folded into divide and concur (issue "the map past 6x6", the three-weight
# lever): the hybrid layout with and without `--propagate TAU`, by the lever protocol of
# scripts/protocol-bench.sh (64 trials on one core, one wall-clock budget, the same seeds).
#
#   benches/results/propagate/propagate-bench.sh OUT SECONDS PUZZLE "none 0.5 0.9 ..."
set -euo pipefail
OUT=${1:?usage: $0 OUT SECONDS PUZZLE ARMS}
SECS=$2; PUZZLE=$3
arms=()
for arm in $4; do
  if [ "$arm" = none ]; then arms+=("none=--method dc --hybrid"); else arms+=("$arm=--method dc --hybrid --propagate $arm"); fi
done
exec "$(dirname "$0")/protocol-bench.sh" "$OUT" "$SECS" "$PUZZLE" "${arms[@]}"
