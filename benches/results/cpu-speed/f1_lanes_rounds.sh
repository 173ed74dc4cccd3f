#!/bin/bash
# F1 across trials (2026-12-06): a batch of 8 trials on one core, today's binary (NEW: its
# rows with the trials in lock-step, trial_lanes 4, and one at a time, trial_lanes 1, in the
# same call) alternated with the main before the change (OLD: one trial at a time).
# Usage: NEW=target/release/concur OLD=/path/to/old/concur benches/results/cpu-speed/f1_lanes_rounds.sh > lines.jsonl
# (one core: taskset core 0 and one rayon thread; nothing else running).
for r in 1 2 3; do
  for b in new old; do
    bin=$NEW; [ $b = old ] && bin=$OLD
    RAYON_NUM_THREADS=1 taskset -c 0 $bin bench --formulations f1 --backends cpu --batches 8 --sizes 5x5,7x7,8x8,16x16 --budget 1 --json 2>/dev/null \
      | grep -E '"kernel":"(iteration|weights)"' | sed "s/^{/{\"binary\":\"$b\",\"round\":$r,/"
  done
done
