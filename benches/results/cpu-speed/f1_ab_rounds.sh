#!/bin/bash
# F1 per core, a new binary against an old one: a batch of 8 trials on one core, the two
# binaries alternated in the same rounds (wall-clock figures on these machines move by up
# to 1.7x between runs, so only same-round ratios are compared).
# Usage: NEW=target/release/concur OLD=/path/to/old/concur [ROUNDS=4] [KERNELS='iteration|weights'] benches/results/cpu-speed/f1_ab_rounds.sh > lines.jsonl
# (KERNELS: the bench rows kept, default the whole iteration.)
# (one core: taskset core 0 and one rayon thread; nothing else running).
for r in $(seq 1 "${ROUNDS:-4}"); do
  for b in new old; do
    bin=$NEW; [ $b = old ] && bin=$OLD
    RAYON_NUM_THREADS=1 taskset -c 0 $bin bench --formulations f1 --backends cpu --batches 8 --sizes 5x5,7x7,8x8,16x16 --budget 1 --json 2>/dev/null \
      | grep -E "\"kernel\":\"(${KERNELS:-iteration})\"" | sed "s/^{/{\"binary\":\"$b\",\"round\":$r,/"
  done
done
