#!/bin/bash
# F1 across trials (2026-12-06): a batch of 8 trials on one core, today's binary (NEW: its
# rows with the trials in lock-step, trial_lanes 4, and one at a time, trial_lanes 1, in the
# same call) alternated with the issue's main before the change (OLD: one trial at a time),
# three rounds, the iteration's rows and the weights kernel's.
# Usage: NEW=target/release/concur OLD=/path/to/old/concur benches/results/cpu-speed/f1_lanes_rounds.sh > lines.jsonl
# (one core: taskset core 0 and one rayon thread; nothing else running).
ROUNDS=3 KERNELS='iteration|weights' exec "$(dirname "$0")/f1_ab_rounds.sh"
