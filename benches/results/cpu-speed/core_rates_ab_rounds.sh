#!/bin/bash
# The map's per-core rate in the campaigns' configuration (rate mode, 8 trials on one core),
# a new binary against an old one: three rounds, the binaries' rrr rows alternated, on core 0.
# Usage: NEW=target/release/concur OLD=/path/to/old/concur FILE=benches/results/cpu-speed/lines.jsonl benches/results/cpu-speed/core_rates_ab_rounds.sh
SZ="07x07 08x07 08x08 10x10 e2"
for r in 1 2 3; do
  CONCUR=$NEW METHODS=rrr SIZES="$SZ" taskset -c 0 scripts/core-rates.sh 10 | sed 's/^{/{"binary": "new", /' >> "$FILE"
  CONCUR=$OLD METHODS=rrr SIZES="$SZ" taskset -c 0 scripts/core-rates.sh 10 | sed 's/^{/{"binary": "old", /' >> "$FILE"
done
