#!/bin/bash
# Alternated F1 per-core rounds: today's binary (NEW) and the starting one (OLD).
# Usage: NEW=target/release/concur OLD=/path/to/old/concur benches/results/cpu-speed/f1_per_core_rounds.sh > lines.jsonl
# (one core, taskset core 0; nothing else running).
for r in 1 2 3 4 5; do
  for b in new old; do
    bin=$NEW; [ $b = old ] && bin=$OLD
    taskset -c 0 $bin bench --formulations f1 --backends cpu --batches 1 --sizes 5x5,7x7,8x8,16x16 --budget 1 --json 2>/dev/null \
      | grep '"kernel":"iteration"' | grep -v reduced_costs | sed "s/^{/{\"binary\":\"$b\",\"round\":$r,/"
  done
done
