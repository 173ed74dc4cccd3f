#!/bin/bash
# The map's per-core rate with the row reduction in one pass a step (2026-12-06 evening): three
# rounds, the new binary's rrr rows (the campaigns' configuration: rate mode, 8 trials on one
# core) alternated with main before it, on core 0.
# Usage: NEW=target/release/concur OLD=/path/to/old/concur OUT=benches/results/cpu-speed benches/results/cpu-speed/core_rates_fused_rounds.sh
FILE="${OUT:-.}/core-rates-fused-2026-12-06.jsonl" exec "$(dirname "$0")/core_rates_ab_rounds.sh"
