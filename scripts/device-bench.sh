#!/usr/bin/env bash
# Device check on a machine with a real GPU (one command, under 8 minutes on an H200):
# builds, runs the GPU tests with REQUIRE_GPU=1, then `concur bench --json` across batch
# sizes for 8x8 and 16x16, and summarises the fraction of the device's copy bandwidth the
# kernels reach and the batch size where the GPU overtakes the CPU.
#
#   scripts/device-bench.sh [OUT_DIR]      (default: $OUT, else ./device-bench)
#
# COPY_GBPS overrides the reference copy bandwidth (default: the one measured in the run;
# an H200's measured copy bandwidth is about 4,300 GB/s).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-${OUT:-device-bench}}
mkdir -p "$out"
export NODEVICE_SELECT=1 CARGO_TERM_COLOR=never

{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null || true; nproc; } | tee "$out/machine.txt"
cargo build --release 2>&1 | tail -1
REQUIRE_GPU=1 timeout 240 cargo test --release --test main gpu 2>&1 | tail -25 | tee "$out/gpu-tests.txt"

bin=target/release/concur
timeout 150 "$bin" bench --json --backends gpu --sizes 8x8,16x16 --batches 1,16,256,1024,4096,16384 \
  --budget 0.3 --max-gib 40 > "$out/bench-gpu.jsonl" || echo "gpu bench stopped early (rc $?)"
timeout 120 "$bin" bench --json --backends cpu --sizes 8x8,16x16 --batches 1,16,256,1024 \
  --budget 0.3 > "$out/bench-cpu.jsonl" || echo "cpu bench stopped early (rc $?)"

if command -v python3 >/dev/null; then
  python3 - "$out" <<'PY' | tee "$out/summary.txt"
import json, os, sys
out = sys.argv[1]
rows = []
for f in ("bench-gpu.jsonl", "bench-cpu.jsonl"):
    p = os.path.join(out, f)
    if os.path.exists(p):
        rows += [json.loads(l) for l in open(p) if l.strip()]
copy = [r["gb_per_s"] for r in rows if r["kernel"] == "copy"]
ref = float(os.environ.get("COPY_GBPS", copy[0] if copy else 4300.0))
print(f"reference copy bandwidth: {ref:.0f} GB/s" + (" (measured)" if copy and "COPY_GBPS" not in os.environ else ""))
print("fraction of copy bandwidth, GPU kernels:")
for r in rows:
    if r["backend"] == "gpu" and r["kernel"] != "copy":
        print(f'  {r["formulation"]} {r["size"]:>5} batch {r["batch"]:>6} {r["kernel"]:<9} '
              f'{r["gb_per_s"]:9.1f} GB/s  {100 * r["gb_per_s"] / ref:5.1f} %  {r["trial_iters_per_s"]:.3e} trial-it/s')
print("batch where the GPU overtakes the CPU (whole iterations, trial-it/s):")
for form in ("f1", "dc"):
    for size in ("8x8", "16x16"):
        cpu = {r["batch"]: r["trial_iters_per_s"] for r in rows if r["backend"] == "cpu" and r["formulation"] == form and r["size"] == size and r["kernel"] == "iteration"}
        gpu = {r["batch"]: r["trial_iters_per_s"] for r in rows if r["backend"] == "gpu" and r["formulation"] == form and r["size"] == size and r["kernel"] == "iteration"}
        best_cpu = max(cpu.values(), default=None)
        over = [b for b in sorted(gpu) if best_cpu is not None and gpu[b] > best_cpu]
        print(f"  {form} {size}: best cpu {best_cpu and f'{best_cpu:.3e}'}; gpu beats it from batch {over[0] if over else 'never (in this sweep)'}")
PY
fi
