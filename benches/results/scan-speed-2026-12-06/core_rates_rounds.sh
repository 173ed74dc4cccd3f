#!/usr/bin/env bash
# Alternated rounds: the new binary's full table, then the old binary's scan rows.
# Usage: OLD=/path/to/old/concur OUT=/tmp/rates benches/results/scan-speed-2026-12-06/core_rates_rounds.sh
# (NEW defaults to target/release/concur; the lines go to OUT/new.jsonl and OUT/old.jsonl).
cd "$(dirname "$0")/../../.."
export SIZES="05x05 06x06 07x07 08x07 08x08 10x10 e2"
for r in 1 2 3; do
  CONCUR=${NEW:-target/release/concur} scripts/core-rates.sh 10 >> "${OUT:-.}/new.jsonl"
  METHODS=scan CONCUR=${OLD:?the old binary} scripts/core-rates.sh 10 >> "${OUT:-.}/old.jsonl"
done
echo done
