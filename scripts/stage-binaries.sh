#!/usr/bin/env bash
# Builds the release binary and the integration-test binary and copies them, stripped, into
# DIR (default: ./stage, git-ignored), with the puzzles the device call needs (Brendan Owen's
# set 1 7x7, 8x7, 9x7 and 8x8 from ../shared/puzzles, which does not travel to a device machine), for a
# machine with a GPU but no Rust toolchain. Carry DIR with the checkout:
#
#   scripts/stage-binaries.sh stage
#   # on the GPU machine, from a checkout of the same commit (carrying stage/):
#   scripts/device-bench.sh OUT_DIR
#
# The binaries need the Vulkan loader (libvulkan.so.1) and the GPU's Vulkan driver there.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-stage}
mkdir -p "$dir/puzzles"
# The full test tier (cli/build.rs): the device check runs the long device tests too.
export CONCUR_TESTS=full
cargo build --release
tests=$(cargo test --release --test main --no-run 2>&1 | sed -n 's/.*(\(target[^)]*main-[0-9a-f]*\)).*/\1/p' | tail -1)
[ -n "$tests" ] || { echo "stage-binaries: no test binary was built" >&2; exit 2; }
strip -o "$dir/concur" target/release/concur
strip -o "$dir/main-tests" "$tests"
src=${PUZZLES:-../shared/puzzles}/brendan_owen/pieces_set_1
for s in 07x07 08x07 09x07 08x08; do
  cp "$src/pieces_$s.txt" "$dir/puzzles/" || { echo "stage-binaries: $src/pieces_$s.txt missing" >&2; exit 2; }
done
git rev-parse HEAD > "$dir/commit.txt"
ls -lR "$dir"
