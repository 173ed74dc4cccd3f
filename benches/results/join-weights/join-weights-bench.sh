#!/usr/bin/env bash
# The class-weighted metric lever (issue "the map past 6x6"): iterations per solution of RRR
# at beta 0.7 for several join weights (frame-frame, frame-inner, inner-inner), the same
# trial seeds for every setting. One JSONL file per setting (a header line, then one line per
# trial) under OUT; a setting whose file exists is skipped, so a rerun resumes.
#
#   benches/results/join-weights/join-weights-bench.sh OUT PUZZLE TRIALS MAX_ITERS "1,1,1 1,1,2 ..."
#
# Needs `cargo build --release --example diagnose`. FIX_CORNER=1 also fixes a corner piece
# (`--fix-corner`, files named ...-fixed-w...); DM=1 runs the difference map (...-dm-w...);
# BETA=B another beta than 0.7 (...-bB-w...); STALL=L restarts a trial after L iterations
# without a new best score (`--restart-stall L`, ...-stallL-w...); RC=f32 solves the
# assignments with f32 reduced costs (`--reduced-costs f32`, ...-f32-w...).
set -euo pipefail
OUT=${1:?usage: $0 OUT PUZZLE TRIALS MAX_ITERS WEIGHTS}
PUZZLE=$2; TRIALS=$3; ITERS=$4; WEIGHTS=$5
BIN=${DIAGNOSE:-target/release/examples/diagnose}
mkdir -p "$OUT"
name=$(basename "$PUZZLE" .txt)
for w in $WEIGHTS; do
  b=${BETA:-0.7}
  sfx=""; [ "$b" != 0.7 ] && sfx="-b$b"
  [ -n "${STALL:-}" ] && sfx="$sfx-stall$STALL"
  [ -n "${RC:-}" ] && sfx="$sfx-$RC"
  f="$OUT/$name${DM:+-dm}${FIX_CORNER:+-fixed}$sfx-w$w.jsonl"
  [ -s "$f" ] && continue
  args=()
  [ "$w" != 1,1,1 ] && args=(--join-weights "$w")
  [ -n "${FIX_CORNER:-}" ] && args+=(--fix-corner)
  [ -n "${DM:-}" ] && args+=(--dm)
  [ -n "${STALL:-}" ] && args+=(--restart-stall "$STALL")
  [ -n "${RC:-}" ] && args+=(--reduced-costs "$RC")
  "$BIN" dist "$PUZZLE" --trials "$TRIALS" --max-iters "$ITERS" --beta "$b" --seed 0 "${args[@]}" --out "$f.part"
  mv "$f.part" "$f"
  echo "$name weights $w done" >&2
done
