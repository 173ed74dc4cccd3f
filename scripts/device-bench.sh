#!/usr/bin/env bash
# The device call's throughput part: one command that fits in about 3 minutes of wall time on
# an H200, the most important rows first. Every step appends to OUT/summary.txt as it
# finishes, so a kill at the time limit keeps what finished. The rest of a device call goes
# to the time-to-solution runs (step 6, FIRST=1), or to a campaign script after this one.
#
#   scripts/stage-binaries.sh stage           # here: binaries and puzzles into ./stage
#   scripts/device-bench.sh [OUT_DIR]         # there (default: $OUT, else ./device-bench)
#   REHEARSAL=1 scripts/device-bench.sh DIR   # the same call with reduced sizes (lavapipe)
#
# Steps (wall-clock caps on an H200 in brackets):
#   1. the GPU tests, all of them, the CLI ones on the staged binary (CONCUR_BIN) [40 s]
#   2. F1 8x8 at 1,024 / 4,096 / 16,384 / 65,536 trials: kernels, whole iterations under every
#      placement (cpu, gpu-jv, gpu-jv-sg, each device JV with and without the fused pass,
#      gpu-auction), each kernel's device time inside the device loop (timestamps), and the
#      device assignments class by class [70 s]
#   3. F1 7x7, 10x10 and 16x16 at 4,096 the same way [3 x 20 s]
#   4. the F2 step at 16x16, 4,096 trials, as a control [15 s]
#   5. the CPU backend on all host cores at 8x8, 4,096 trials [15 s]
#   6. (FIRST=1) time to the first verified solution of set 1 7x7 and 8x8: F1 RRR with the
#      device assignment (gpu-jv) at 4,096 and 16,384 trials, FIRST_SEEDS, FIRST_CAP s each
#
# Environment: STAGE (default ./stage: concur, main-tests, puzzles/ from stage-binaries.sh),
# FIRST, FIRST_CAP, FIRST_SEEDS (1,2,3), CONCUR_GPU_K (the device loop's K).
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
  tfilter="gpu"; f1_8="16,64"; f1_one=16; cpu_b=16; first_t="64 128"; seeds=${FIRST_SEEDS:-1}
  cap=${FIRST_CAP:-5}; dc_b=16; dc_size=6x6; budget=0.05; scale=4; sizes_one="5x5,6x6"
else
  tfilter="gpu"; f1_8="1024,4096,16384,65536"; f1_one=4096; cpu_b=4096; first_t="4096 16384"
  seeds=${FIRST_SEEDS:-1,2,3}; cap=${FIRST_CAP:-6}; dc_b=4096; dc_size=16x16; budget=0.1; scale=1
  sizes_one="7x7,10x10,16x16"
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
    if r.get("profile"):
        extra += f' in-loop {r["device_ns"]:.1f} device ns/trial-it'
    if r.get("note"):
        extra += f' ({r["note"]})'
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

step "1. GPU tests (filter '$tfilter', REQUIRE_GPU=1, CONCUR_BIN=$bin)"
REQUIRE_GPU=1 CONCUR_BIN=$(realpath "$bin") timeout $((40 * scale)) "$tests" "$tfilter" --test-threads 4 \
  > "$out/gpu-tests.log" 2>&1
echo "  rc $?: $(grep -E '^test result' "$out/gpu-tests.log" | tail -1)" | tee -a "$summary"
grep -E '^test .* FAILED|panicked' "$out/gpu-tests.log" | head -20 >> "$summary"

step "2. F1 8x8 at $f1_8 trials: every placement and kernel, in-loop timestamps"
bench 70 f1-8x8 gpu f1 8x8 "$f1_8"
step "3. F1 $sizes_one at $f1_one"
for s in $(echo "$sizes_one" | tr , ' '); do
  bench 20 "f1-$s" gpu f1 "$s" "$f1_one"
done
step "4. the F2 step at $dc_size, $dc_b trials (control)"
bench 15 "dc-$dc_size" gpu dc "$dc_size" "$dc_b"
step "5. the CPU backend on all $all host cores"
bench 15 cpu-f1-8x8 cpu f1 8x8 "$cpu_b"
if [ "${FIRST:-0}" != 1 ]; then
  step "done (throughput part; FIRST=1 adds the time-to-solution runs)"
  exit 0
fi

step "6. time to the first verified solution of set 1 (F1 RRR, gpu-jv, cap $cap s)"
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

step "done"
