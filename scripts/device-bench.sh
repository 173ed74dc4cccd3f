#!/usr/bin/env bash
# The device call: one command that fits in 8 minutes of wall time on an H200, the most
# important rows first. Every step appends to OUT/summary.txt as it finishes, so a kill at
# the time limit keeps what finished.
#
#   scripts/stage-binaries.sh stage           # here: binaries and puzzles into ./stage
#   scripts/device-bench.sh [OUT_DIR]         # there (default: $OUT, else ./device-bench)
#   REHEARSAL=1 scripts/device-bench.sh DIR   # the same call with reduced sizes (lavapipe)
#
# Steps (wall-clock caps on an H200 in brackets; about 7 minutes in all):
#   1. the GPU tests (the staged test binary; missing is an error) [150 s]
#   2. F1 8x8 at 1,024 / 4,096 / 16,384 trials: kernels and whole iterations under each
#      placement and kernel of the assignment (cpu, gpu-jv, gpu-auction) [110 s]
#   3. F1 7x7 and 16x16 at 4,096 the same way [2 x 45 s]
#   4. the CPU backend on all host cores (16) on the same puzzles and batches [3 x 20 s]
#   5. time to the first verified solution of set 1 7x7 and 8x8: F1 RRR with the device
#      assignment (gpu-jv) at 4,096 and 16,384 trials, 3 seeds, FIRST_CAP s each (6) [80 s]
#   6. the F2 DC_CHUNKS sweep (16x16 at 1,024 and 4,096, chunk caps 256 and 1,024) [40 s]
#
# Environment: STAGE (default ./stage: concur, main-tests, puzzles/ from stage-binaries.sh),
# FIRST_CAP, FIRST_SEEDS (1,2,3), DC_CHUNKS (256,1024), CONCUR_GPU_K (the device loop's K).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-${OUT:-device-bench}}
stage=${STAGE:-stage}
mkdir -p "$out"
export NODEVICE_SELECT=1 CARGO_TERM_COLOR=never
bin=$stage/concur
tests=$stage/main-tests
puz=$stage/puzzles
for f in "$bin" "$tests" "$puz/pieces_07x07.txt" "$puz/pieces_08x08.txt"; do
  if [ ! -s "$f" ]; then
    echo "device-bench: $f is missing: run scripts/stage-binaries.sh $stage first and carry $stage" >&2
    exit 2
  fi
done
if [ "${REHEARSAL:-0}" = 1 ]; then
  # Reduced sizes for a software GPU: the call's shape, not its figures.
  tfilter="gpu_jv"; f1_8="16,64"; f1_one=16; cpu_b=16; first_t="64 128"; seeds=${FIRST_SEEDS:-1}
  cap=${FIRST_CAP:-5}; chunks=${DC_CHUNKS:-8}; chunk_b=16; dc_size=5x5; budget=0.05; scale=3
else
  tfilter="gpu"; f1_8="1024,4096,16384"; f1_one=4096; cpu_b="256,1024,4096"; first_t="4096 16384"
  seeds=${FIRST_SEEDS:-1,2,3}; cap=${FIRST_CAP:-6}; chunks=${DC_CHUNKS:-256,1024}; chunk_b="1024,4096"
  dc_size=16x16; budget=0.2; scale=1
fi
all=$(nproc)
summary=$out/summary.txt
: > "$summary"
step() { echo "== $(date -u +%H:%M:%S) $*" | tee -a "$summary"; }
# Appends the rows of one jsonl file that a step wrote, one line each.
rows() {
  python3 - "$1" <<'PY' >> "$summary"
import json, sys
for l in open(sys.argv[1]):
    try:
        r = json.loads(l)
    except ValueError:
        continue
    extra = " ".join(f"{k}={r[k]}" for k in ("assign", "class_n", "reduced_costs", "chunk_trials", "host_threads") if r.get(k) is not None)
    print(f'  {r["backend"]:>3} {r["formulation"]} {r["size"]:>5} batch {r["batch"]:>6} {r["kernel"]:<9} '
          f'{r["trial_iters_per_s"]:.3e} trial-it/s {r["gb_per_s"]:8.1f} GB/s {extra}')
PY
}
bench() { # timeout file backend formulation size batches [extra...]
  local t=$1 f=$2; shift 2
  local threads=$all
  timeout $((t * scale)) env RAYON_NUM_THREADS=$threads "$bin" bench --json --backends "$1" --formulations "$2" \
    --sizes "$3" --batches "$4" --budget "$budget" --max-gib 40 "${@:5}" > "$out/$f.jsonl"
  local rc=$?
  [ $rc = 0 ] || echo "  (stopped early, rc $rc)" | tee -a "$summary"
  rows "$out/$f.jsonl"
}

{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null || true
  echo "cores: $all"; grep -m1 'model name' /proc/cpuinfo || true; cat "$stage/commit.txt" 2>/dev/null || true; } \
  | tee "$out/machine.txt"

step "1. GPU tests (filter '$tfilter', REQUIRE_GPU=1)"
REQUIRE_GPU=1 timeout $((150 * scale)) "$tests" "$tfilter" --test-threads 4 > "$out/gpu-tests.log" 2>&1
echo "  rc $?: $(grep -E '^test result' "$out/gpu-tests.log" | tail -1)" | tee -a "$summary"
grep -E '^test .* FAILED|panicked' "$out/gpu-tests.log" | head -20 >> "$summary"

step "2. F1 8x8 at $f1_8 trials, every placement and kernel"
bench 110 f1-8x8 gpu f1 8x8 "$f1_8"
step "3. F1 7x7 and 16x16 at $f1_one"
bench 45 f1-7x7 gpu f1 7x7 "$f1_one"
bench 45 f1-16x16 gpu f1 16x16 "$f1_one"
step "4. the CPU backend on all $all host cores"
for s in 7x7 8x8 16x16; do
  bench 20 cpu-f1-$s cpu f1 $s "$cpu_b"
done

step "5. time to the first verified solution of set 1 (F1 RRR, gpu-jv, cap $cap s)"
for size in 07x07 08x08; do
  for t in $first_t; do
    for seed in $(echo "$seeds" | tr , ' '); do
      line=$(timeout $((cap * scale + 30)) "$bin" solve "$puz/pieces_$size.txt" --method rrr --backend gpu \
        --assign gpu-jv --trials "$t" --seed "$seed" --time-limit "$cap" --max-iters 100000000 --json 2>/dev/null)
      echo "{\"puzzle\":\"set1-$size\",\"trials\":$t,\"seed\":$seed,\"cap_s\":$cap,\"run\":${line:-null}}" \
        >> "$out/first-solution.jsonl"
      python3 -c '
import json, sys
r = json.loads(sys.argv[1]); run = r["run"] or {}
if run.get("solved"):
    t = "%.2f s, %s iterations" % (run["wall_s"], run.get("iterations"))
else:
    t = "> %s s (unsolved, best %s/%s)" % (r["cap_s"], run.get("best_score"), run.get("max_score"))
print("  %s %6d trials seed %s: %s" % (r["puzzle"], r["trials"], r["seed"], t))' "$(tail -1 "$out/first-solution.jsonl")" \
        | tee -a "$summary"
    done
  done
done

step "6. F2 $dc_size with at most DC_CHUNKS=$chunks trials per device chunk"
for c in $(echo "$chunks" | tr , ' '); do
  bench 20 dc-chunk-$c gpu dc "$dc_size" "$chunk_b" --dc-chunk-trials "$c"
done
step "done"
