#!/usr/bin/env bash
# Device check on a machine with a real GPU (one command, under 8 minutes on an H200):
# builds (or takes prebuilt binaries), runs the GPU tests with REQUIRE_GPU=1, then
# `concur bench --json` across batch sizes for 8x8 and 16x16 on the GPU, and on two CPU cores
# of the same machine (the comparison the issue asks for: a 2-core CPU), and summarises the
# fraction of the device's copy bandwidth the kernels reach and the batch size where the GPU
# overtakes the CPU.
#
#   scripts/device-bench.sh [OUT_DIR]      (default: $OUT, else ./device-bench)
#
# Environment:
#   CONCUR_BIN, CONCUR_TESTS  prebuilt `concur` and test binary (scripts/stage-binaries.sh
#                             makes both; or `cargo test --release
#                             --test main --no-run` prints its path): skip the build, for
#                             machines without a Rust toolchain
#   COPY_GBPS                 reference copy bandwidth (default: the faster of the run's two
#                             copies, the copy kernel and the API's buffer copy; an H200's
#                             measured copy bandwidth is about 4,300 GB/s, while its Vulkan
#                             buffer copy gave 832 GB/s)
#   HOST_CPUS                 the cores the GPU runs' host threads use (default 2,3)
#   CPU_CPUS                  the two cores of the CPU comparison (default 0,1)
#   TEST_CPUS                 the cores of the GPU tests (default 0-3)
#   DC8_BATCHES, DC16_BATCHES, F1_8_BATCHES, F1_16_BATCHES
#                             the batch lists of the four GPU sweeps (set but empty: skip it)
#   CPU_BENCH=0               skip the 2-core CPU comparison
#   F1_7_BATCHES              F1 7x7 sweep (default 256,1024,4096,16384); each F1 GPU sweep
#                             measures whole iterations with the assignments on the host
#                             (assign cpu) and on the device (assign gpu)
#   HOST16_CPUS               the host cores of the F1 CPU comparison on all cores
#                             (default 0-15; F1_CPU16=0 skips it)
#   FIRST=0                   skip the time to the first solution of set 1 7x7 and 8x8
#                             (F1 RRR, device assignment, 4,096 and 16,384 device trials,
#                             against the CPU backend on HOST16_CPUS with 64 trials)
#   FIRST_CAP, FIRST_SEEDS    its cap per run in seconds (default 10) and seeds (1,2,3,4,5)
#   FIRST_GPU_TRIALS, FIRST_CPU_TRIALS
#                             its trial counts (default 4096,16384 on the GPU, 64 on the CPU)
#   PUZZLES                   the puzzle sets (default ../shared/puzzles, which does not
#                             travel to a device machine: copy set 1 into an ignored folder
#                             of the checkout, carry it, and point PUZZLES there)
#   DC_CHUNKS, DC_CHUNK_BATCHES
#                             F2 16x16 again with at most each of DC_CHUNKS trials per device
#                             chunk (default: no such sweep), at DC_CHUNK_BATCHES (1024,4096);
#                             DC_CHUNK_SIZE another size
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-${OUT:-device-bench}}
mkdir -p "$out"
export NODEVICE_SELECT=1 CARGO_TERM_COLOR=never
# Pin each part to its cores where taskset exists.
pin() { if command -v taskset >/dev/null; then echo "taskset -c $1"; fi; }
host=$(pin "${HOST_CPUS:-2,3}")
cpus=$(pin "${CPU_CPUS:-0,1}")
tcpus=$(pin "${TEST_CPUS:-0-3}")

{ nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv,noheader 2>/dev/null || true
  nproc; grep -m1 'model name' /proc/cpuinfo || true; } | tee "$out/machine.txt"

bin=${CONCUR_BIN:-target/release/concur}
tests=${CONCUR_TESTS:-}
if [ -z "${CONCUR_BIN:-}" ]; then
  cargo build --release 2>&1 | tail -1
fi
if [ -z "$tests" ]; then
  tests=$(cargo test --release --test main --no-run 2>&1 | sed -n 's/.*(\(target[^)]*main-[0-9a-f]*\)).*/\1/p' | tail -1)
fi

# The GPU kernels against their CPU references, and whole GPU solves (module tests::gpu).
REQUIRE_GPU=1 RAYON_NUM_THREADS=4 timeout 240 $tcpus "$tests" gpu --test-threads 4 2>&1 | tee "$out/gpu-tests.log" | tail -25

# One bench call per (formulation, size), batches chosen to fit the time: the F1 iteration
# runs its assignments on the host's two cores (RAYON_NUM_THREADS=2), so large F1 batches
# take long, and a dc 16x16 trial holds about 9 MB of state.
gpu_bench() {
  RAYON_NUM_THREADS=2 timeout "$1" $host "$bin" bench --json --backends gpu --formulations "$2" \
    --sizes "$3" --batches "$4" --budget 0.3 --max-gib 40 ${5:-} >> "$out/bench-gpu.jsonl" ||
    echo "gpu bench $2 $3 stopped early (rc $?)"
}
cpu_bench() {
  RAYON_NUM_THREADS=2 timeout "$1" $cpus "$bin" bench --json --backends cpu --formulations "$2" \
    --sizes "$3" --batches "$4" --budget 0.3 >> "$out/bench-cpu.jsonl" ||
    echo "cpu bench $2 $3 stopped early (rc $?)"
}
: > "$out/bench-gpu.jsonl"
: > "$out/bench-cpu.jsonl"
{
  [ "${CPU_BENCH:-1}" = 0 ] && exit 0
  cpu_bench 40 dc 8x8 1,16,64,256
  cpu_bench 40 f1 8x8 1,16,64,256
  cpu_bench 30 dc 16x16 1,4,16
  cpu_bench 30 f1 16x16 1,4,16
} &
cpu_job=$!
# Batches per (formulation, size); an empty list skips that bench.
[ -n "${DC8_BATCHES-x}" ] && gpu_bench 90 dc 8x8 "${DC8_BATCHES:-1,16,256,1024,4096,16384}"
[ -n "${DC16_BATCHES-x}" ] && gpu_bench 110 dc 16x16 "${DC16_BATCHES:-1,16,256,1024}"
[ -n "${F1_7_BATCHES-x}" ] && gpu_bench 100 f1 7x7 "${F1_7_BATCHES:-256,1024,4096,16384}"
[ -n "${F1_8_BATCHES-x}" ] && gpu_bench 100 f1 8x8 "${F1_8_BATCHES:-256,1024,4096,16384}"
[ -n "${F1_16_BATCHES-x}" ] && gpu_bench 90 f1 16x16 "${F1_16_BATCHES:-256,1024,4096}"
# F2 with the trials per device chunk capped (e.g. DC_CHUNKS=128,256,512): large batches of
# 16x16 at each cap, to see whether smaller trial-minor arrays speed up concur's gathers.
for c in $(echo "${DC_CHUNKS:-}" | tr , ' '); do
  gpu_bench 60 dc "${DC_CHUNK_SIZE:-16x16}" "${DC_CHUNK_BATCHES:-1024,4096}" "--dc-chunk-trials $c"
done
wait "$cpu_job"
# F1 whole iterations on all host cores (the CPU side of the device-assignment comparison).
cpu16=$(pin "${HOST16_CPUS:-0-15}")
if [ "${F1_CPU16:-1}" != 0 ]; then
  for size in 7x7 8x8 16x16; do
    RAYON_NUM_THREADS=$(nproc) timeout 60 $cpu16 "$bin" bench --json --backends cpu --formulations f1 \
      --sizes $size --batches 256,1024,4096 --budget 0.3 | sed 's/}$/,"host_threads":'"$(nproc)"'}/' \
      >> "$out/bench-cpu16.jsonl" || echo "cpu16 bench $size stopped early"
  done
fi
# Time to the first verified solution of set 1 7x7 and 8x8: F1 RRR with the device assignment
# at 4,096 and 16,384 trials, against the CPU backend on all host cores (64 trials).
if [ "${FIRST:-1}" != 0 ]; then
  puz=${PUZZLES:-../shared/puzzles}/brendan_owen/pieces_set_1
  cap=${FIRST_CAP:-10}
  for size in 07x07 08x08; do
    for seed in $(echo "${FIRST_SEEDS:-1,2,3,4,5}" | tr , ' '); do
      for run in $(for t in $(echo "${FIRST_GPU_TRIALS:-4096,16384}" | tr , ' '); do echo "gpu:$t"; done) "cpu:${FIRST_CPU_TRIALS:-64}"; do
        run=${run/:/ }
        set -- $run
        extra=""; [ "$1" = gpu ] && extra="--assign gpu"
        line=$(timeout $((cap + 60)) $cpu16 "$bin" solve "$puz/pieces_$size.txt" --method rrr --backend "$1" $extra \
          --trials "$2" --seed "$seed" --time-limit "$cap" --max-iters 100000000 --json 2>/dev/null)
        echo "{\"puzzle\":\"set1-$size\",\"backend\":\"$1\",\"trials\":$2,\"seed\":$seed,\"cap_s\":$cap,\"run\":${line:-null}}" \
          >> "$out/first-solution.jsonl"
      done
    done
  done
fi

python3 - "$out" <<'PY' | tee "$out/summary.txt"
import json, os, sys
out = sys.argv[1]
rows = []
for f in ("bench-gpu.jsonl", "bench-cpu.jsonl", "bench-cpu16.jsonl"):
    p = os.path.join(out, f)
    if os.path.exists(p):
        for l in open(p):
            try:
                rows.append(json.loads(l))
            except ValueError:
                pass
copy = [r["gb_per_s"] for r in rows if r["kernel"].startswith("copy")]
ref = float(os.environ.get("COPY_GBPS", max(copy) if copy else 4300.0))
print(f"reference copy bandwidth: {ref:.0f} GB/s" + (" (measured)" if copy and "COPY_GBPS" not in os.environ else ""))
print("GPU kernels: state traffic and fraction of the copy bandwidth")
for r in rows:
    if r["backend"] == "gpu" and not r["kernel"].startswith("copy"):
        chunk = f' chunk {r["chunk_trials"]}' if r.get("chunk_trials") else ''
        print(f'  {r["formulation"]} {r["size"]:>5} batch {r["batch"]:>6}{chunk} {r["kernel"]:<9} '
              f'{r["gb_per_s"]:9.1f} GB/s  {100 * r["gb_per_s"] / ref:5.1f} %  {r["trial_iters_per_s"]:.3e} trial-it/s')
print("target: dc step at batch >= 1024 reaches 50 % of the copy bandwidth")
for r in rows:
    if r["backend"] == "gpu" and r["kernel"] == "step" and r["batch"] >= 1024:
        frac = r["gb_per_s"] / ref
        chunk = f' chunk {r["chunk_trials"]}' if r.get("chunk_trials") else ''
        print(f'  dc {r["size"]:>5} batch {r["batch"]:>6}{chunk}: {100 * frac:.1f} % ({"met" if frac >= 0.5 else "missed"})')
print("CPU (2 cores) whole iterations, and the batch where the GPU overtakes its best:")
for form in ("f1", "dc"):
    for size in ("8x8", "16x16"):
        cpu = {r["batch"]: r["trial_iters_per_s"] for r in rows if r["backend"] == "cpu" and r["formulation"] == form and r["size"] == size and r["kernel"] == "iteration"}
        gpu = {r["batch"]: r["trial_iters_per_s"] for r in rows if r["backend"] == "gpu" and r["formulation"] == form and r["size"] == size and r["kernel"] == "iteration" and not r.get("chunk_trials")}
        best_cpu = max(cpu.values(), default=None)
        over = [b for b in sorted(gpu) if best_cpu is not None and gpu[b] > best_cpu]
        best_gpu = max(gpu.values(), default=None)
        print(f"  {form} {size}: best cpu {best_cpu and f'{best_cpu:.3e}'}, best gpu {best_gpu and f'{best_gpu:.3e}'} trial-it/s; "
              f"gpu beats the cpu from batch {over[0] if over else 'never (in this sweep)'}")
print("F1 whole iterations (trial-it/s): device against host assignment, and all host cores")
for size in ("7x7", "8x8", "16x16"):
    for r in rows:
        if r["formulation"] == "f1" and r["size"] == size and r["kernel"] == "iteration" and (r.get("assign") or r.get("host_threads")):
            where = f'gpu, assign {r["assign"]}' if r.get("assign") else f'cpu, {r["host_threads"]} threads'
            print(f'  f1 {size:>5} batch {r["batch"]:>6} {where:<18} {r["trial_iters_per_s"]:.3e}')
print("target: f1 8x8 at 4,096 trials with the device assignment >= 3e6 trial-it/s and >= 20x the host cores")
p = os.path.join(out, "first-solution.jsonl")
if os.path.exists(p):
    print("time to the first verified solution (s; '>' = not within the cap):")
    for l in open(p):
        try:
            r = json.loads(l)
        except ValueError:
            continue
        run = r.get("run") or {}
        t = f'{run["wall_s"]:.2f}' if run.get("solved") else f'> {r["cap_s"]}'
        print(f'  {r["puzzle"]} {r["backend"]} {r["trials"]:>6} trials seed {r["seed"]}: {t}')
PY
