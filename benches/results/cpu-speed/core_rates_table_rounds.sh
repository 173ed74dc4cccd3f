#!/bin/bash
# The per-core rates table of the hardness reports, remade with the map in lock-step
# (2026-12-06 afternoon): three rounds of the whole table (rrr as the campaigns run it, 8 trials
# on the core; the scan; AC-4), set 1's 5x5 to 10x10 and the official 16x16, 10 s a row, on core 0.
# Usage: CONCUR=target/release/concur benches/results/cpu-speed/core_rates_table_rounds.sh > rates.jsonl
for r in 1 2 3; do
  SIZES="05x05 06x06 07x07 08x07 08x08 10x10 e2" taskset -c 0 scripts/core-rates.sh 10
done
