#!/usr/bin/env bash
# The ladder's own cost beside a large results folder: start-up and per-run overhead of
# `concur ladder --resume` under a stopping rule, with RECORDS records of another shard on
# file, against the same ladder beside an empty folder; and what a per-line fsync would cost
# on this disk, against the ladder's interval sync (at most one per 0.5 s).
#
#   scripts/ladder-overhead.sh [RECORDS] [RUNS]    (defaults 100000 and 1000)
#
# Prints JSON lines: one per timed call (records on file, runs, seconds), then the overheads.
set -euo pipefail
cd "$(dirname "$0")/.."
RECORDS=${1:-100000}
RUNS=${2:-1000}
BIN=${CONCUR_BIN:-target/release/concur}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

config() { # $1 runs
  cat <<CFG
runs = $1
seed = 1
[[instances]]
generate = { width = 4, height = 4, seed = 1 }
[[methods]]
method = "scan"
max_nodes = 1000000
[[stops]]
methods = ["scan"]
per_instance = true
target_solutions = 1000000000
CFG
}

# RECORDS records of shard 2 of 2 (another writer's), each a plausible record of ~700 bytes.
python3 - "$work/records.jsonl" "$RECORDS" <<'PY'
import json, sys
path, n = sys.argv[1], int(sys.argv[2])
with open(path, "w") as f:
    for i in range(n):
        r = {"instance": f"generated:8x7:seed{i % 50}", "width": 8, "height": 7, "colors": 10,
             "method": "rrr", "label": "rrr", "params": {"keep_going": True, "max_iters": 200000, "method": "rrr", "trials": 8},
             "run": i, "seed": 1000003 * i, "backend": "cpu", "solved": True, "mechanism": "map",
             "work": 1600000, "work_unit": "iterations", "wall_s": 25.1, "best_score": 97, "max_score": 97,
             "version": "0.1.0", "trace": [[0.001, 80], [0.5, 95], [3.2, 97]], "solutions": 1, "distinct_solutions": 1,
             "trials": 8, "device": "dev VM",
             "provenance": {"host": "node17", "cpu": "AMD EPYC 7763 64-Core Processor", "threads": 8,
                            "job": {"scheduler": "slurm", "id": "4242", "array_job": "4240", "array_task": "2", "restarts": 0},
                            "started": "2026-12-05T12:00:00Z", "cpu_s": 25.0, "peak_mib": 80.1}}
        f.write(json.dumps(r) + "\n")
PY

timed() { # $1 label, $2 runs, $3 with records (0/1)
  local dir="$work/out-$1"
  rm -rf "$dir"; mkdir -p "$dir"
  [ "$3" = 1 ] && cp "$work/records.jsonl" "$dir/results-2-of-2.jsonl"
  config "$2" > "$work/ladder.toml"
  local t0 t1
  t0=$(date +%s.%N)
  "$BIN" ladder "$work/ladder.toml" --out "$dir" --shard 1/2 --resume --threads 1 2>/dev/null
  t1=$(date +%s.%N)
  python3 -c "import json;print(json.dumps({'call':'$1','records_on_file':$(( $3 * RECORDS )),'runs':$2,'seconds':round($t1-$t0,4)}))"
}

small=$(( RUNS / 100 > 10 ? RUNS / 100 : 10 ))
rows=$(
  for rep in 1 2 3; do
    timed empty-small "$small" 0
    timed empty-large "$RUNS" 0
    timed full-small "$small" 1
    timed full-large "$RUNS" 1
  done
)
echo "$rows"
echo "$rows" | python3 -c "
import json, sys, statistics as st
rows = [json.loads(l) for l in sys.stdin]
med = lambda c: st.median(r['seconds'] for r in rows if r['call'] == c)
runs = [r['runs'] for r in rows if r['call'] == 'full-large'][0]
small = [r['runs'] for r in rows if r['call'] == 'full-small'][0]
startup = med('full-small') - med('empty-small')
per_run_empty = (med('empty-large') - med('empty-small')) / (runs - small)
per_run_full = (med('full-large') - med('full-small')) / (runs - small)
print(json.dumps({'records_on_file': $RECORDS, 'startup_s': round(startup, 4),
                  'per_run_overhead_ms': round((per_run_full - per_run_empty) * 1e3, 4),
                  'per_run_s_empty': round(per_run_empty, 6), 'per_run_s_full': round(per_run_full, 6)}))
"
# What a sync per line would cost here: fdatasync after each of 200 appended lines.
python3 - "$work/sync.jsonl" <<'PY'
import os, sys, time, json
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_APPEND)
line = (json.dumps({"pad": "x" * 600}) + "\n").encode()
t = time.perf_counter()
for _ in range(200):
    os.write(fd, line)
    os.fdatasync(fd)
dt = (time.perf_counter() - t) / 200
print(json.dumps({"fdatasync_per_line_ms": round(dt * 1e3, 3)}))
PY
