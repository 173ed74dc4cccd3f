#!/bin/bash
# The row reduction's fused kernel (2026-12-06): a batch of 8 trials on one core, the new
# binary (NEW: one pass a row-reduction step) alternated with main before it (OLD: a pass for
# the two smallest reduced costs, then one for the first column), four rounds.
# Usage: NEW=target/release/concur OLD=/path/to/old/concur benches/results/cpu-speed/f1_fused_rounds.sh > lines.jsonl
# (one core: taskset core 0 and one rayon thread; nothing else running).
for r in 1 2 3 4; do
  for b in new old; do
    bin=$NEW; [ $b = old ] && bin=$OLD
    RAYON_NUM_THREADS=1 taskset -c 0 $bin bench --formulations f1 --backends cpu --batches 8 --sizes 5x5,7x7,8x8,16x16 --budget 1 --json 2>/dev/null \
      | grep -E '"kernel":"iteration"' | sed "s/^{/{\"binary\":\"$b\",\"round\":$r,/"
  done
done
