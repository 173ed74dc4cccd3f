#!/usr/bin/env bash
# Per-core work rates of the campaign's methods, side by side in one run, to convert the
# campaign's work units (map iterations, tree nodes) into core-seconds: rrr iterations/s,
# scan nodes/s and AC-4 nodes/s on the same puzzles, one core each, one after the other.
# Run it with nothing else on the machine. One JSON line per (puzzle, method) on stdout.
#
#   scripts/core-rates.sh [SECONDS] > rates.jsonl      (default 20 s per row)
#   SIZES="05x05 06x06 07x07 08x07 10x10 e2" scripts/core-rates.sh 10 > rates.jsonl   (other sizes of set 1;
#                                       e2: the official 16x16 with its hints, eternity2.dev's v00)
#   METHODS=scan CONCUR=old/concur scripts/core-rates.sh 10   (some methods only, another binary)
#   RRR_TRIALS=1 METHODS=rrr scripts/core-rates.sh 10   (the map one trial at a time)
#
# The map runs as the campaigns run it: rate mode (a solution does not end the row, so small
# boards are timed for the whole row, not their setup), 8 trials on the one core (RRR_TRIALS,
# default 8), which a worker advances four at a time in lock-step (MapConfig::trial_lanes):
# its rate per core is that batch's, higher than one trial's alone.
#
# Several runs' lines may share one file: the hardness report averages a method's lines at a
# size (the mean of the costs). Alternate the binaries' runs when comparing two of them.
#
# Needs target/release/concur (cargo build --release) and the puzzle sets (CONCUR_PUZZLES or
# ../shared/puzzles).
set -euo pipefail
T=${1:-20}
BIN=${CONCUR:-target/release/concur}
ROOT=${CONCUR_PUZZLES:-../shared/puzzles}
P=$ROOT/brendan_owen/pieces_set_1
[ -x "$BIN" ] || { echo "missing $BIN: run cargo build --release" >&2; exit 2; }
[ -d "$P" ] || { echo "missing puzzles at $P" >&2; exit 2; }
out=$(mktemp); trap 'rm -f "$out"' EXIT
host=$(hostname); cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'); load=$(cut -d' ' -f1 /proc/loadavg)
for size in ${SIZES:-07x07 08x07 08x08}; do
  for m in ${METHODS:-rrr scan ac4}; do
    case $m in
      rrr) args=(--method rrr --trials "${RRR_TRIALS:-8}" --keep-going);;
      scan) args=(--method scan);;
      ac4) args=(--method backtrack --ac ac4);;
      *) echo "unknown method $m (rrr, scan, ac4)" >&2; exit 2;;
    esac
    # Seed 11 keeps the first solutions out of the way (a solved run's rate covers less time).
    if [ "$size" = e2 ]; then file=$ROOT/eternity2_dev_cc0/e2-16x16-v00.json; name=e2-v00-16x16
    else file=$P/pieces_$size.txt; name=set1-$size; fi
    # The report goes through a file: rate mode's lists every solution.
    "$BIN" solve "$file" "${args[@]}" --threads 1 --backend cpu --seed 11 --time-limit "$T" --json > "$out" 2>/dev/null || true
    trials=1; [ "$m" = rrr ] && trials=${RRR_TRIALS:-8}
    python3 - "$name" "$m" "$host" "$cpu" "$load" "$out" "$trials" <<'PY'
import json, sys
name, m, host, cpu, load, out, trials = sys.argv[1:]
r = json.load(open(out))
rate = r.get("iters_per_s") or r.get("nodes_per_s")
unit = "iterations/s" if "iters_per_s" in r else "nodes/s"
print(json.dumps({"puzzle": name, "method": m, "trials": int(trials), "rate": rate, "unit": unit, "wall_s": r["wall_s"],
                  "solved": r["solved"], "host": host, "cpu": cpu, "load_before": float(load)}))
PY
  done
done
