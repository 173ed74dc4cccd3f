#!/bin/bash
# The map's per-core rate with the row reduction in one pass a step (2026-12-06 evening): three
# rounds, the new binary's rrr rows (the campaigns' configuration: rate mode, 8 trials on one
# core) alternated with main before it, on core 0.
# Usage: NEW=target/release/concur OLD=/path/to/old/concur OUT=benches/results/cpu-speed benches/results/cpu-speed/core_rates_fused_rounds.sh
SZ="07x07 08x07 08x08 10x10 e2"
for r in 1 2 3; do
  CONCUR=$NEW METHODS=rrr SIZES="$SZ" taskset -c 0 scripts/core-rates.sh 10 | sed 's/^{/{"binary": "new", /' >> "${OUT:-.}/core-rates-fused-2026-12-06.jsonl"
  CONCUR=$OLD METHODS=rrr SIZES="$SZ" taskset -c 0 scripts/core-rates.sh 10 | sed 's/^{/{"binary": "old", /' >> "${OUT:-.}/core-rates-fused-2026-12-06.jsonl"
done
