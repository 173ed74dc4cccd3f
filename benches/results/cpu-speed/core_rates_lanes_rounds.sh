#!/bin/bash
# The map's per-core rates with the trials in lock-step (2026-12-06): three rounds, each the
# campaigns' batch (8 trials, one core) and one trial alone, alternated, same binary.
# Usage: CONCUR=target/release/concur OUT=benches/results/cpu-speed benches/results/cpu-speed/core_rates_lanes_rounds.sh
SZ="05x05 06x06 07x07 08x07 08x08 10x10 e2"
for r in 1 2 3; do
  RRR_TRIALS=8 METHODS=rrr SIZES="$SZ" taskset -c 0 scripts/core-rates.sh 10 >> "${OUT:-.}/core-rates-rrr-8-trials-2026-12-06.jsonl"
  RRR_TRIALS=1 METHODS=rrr SIZES="$SZ" taskset -c 0 scripts/core-rates.sh 10 >> "${OUT:-.}/core-rates-rrr-1-trial-2026-12-06.jsonl"
done
