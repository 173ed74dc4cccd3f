#!/usr/bin/env bash
# Builds the release binary and the integration-test binary and copies them, stripped, into
# DIR (default: ./stage), for a machine with a GPU but no Rust toolchain:
#
#   scripts/stage-binaries.sh stage
#   # on the GPU machine, from a checkout of the same commit:
#   CONCUR_BIN=stage/concur CONCUR_TESTS=stage/main-tests scripts/device-bench.sh OUT_DIR
#
# The binaries need the Vulkan loader (libvulkan.so.1) and the GPU's Vulkan driver there.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-stage}
mkdir -p "$dir"
cargo build --release
tests=$(cargo test --release --test main --no-run 2>&1 | sed -n 's/.*(\(target[^)]*main-[0-9a-f]*\)).*/\1/p' | tail -1)
strip -o "$dir/concur" target/release/concur
strip -o "$dir/main-tests" "$tests"
ls -l "$dir"
