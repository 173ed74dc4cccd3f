#!/bin/bash
# The row reduction's fused kernel (2026-12-06): a batch of 8 trials on one core, the new
# binary (NEW: one pass a row-reduction step) alternated with main before it (OLD: a pass for
# the two smallest reduced costs, then one for the first column), four rounds.
# Usage: NEW=target/release/concur OLD=/path/to/old/concur benches/results/cpu-speed/f1_fused_rounds.sh > lines.jsonl
# (one core: taskset core 0 and one rayon thread; nothing else running).
ROUNDS=4 exec "$(dirname "$0")/f1_ab_rounds.sh"
