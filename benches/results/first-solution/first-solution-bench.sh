#!/usr/bin/env bash
# Wall time to the first solution, side by side on one machine: `solve --method scan` and
# `solve --method backtrack --ac ac4` (both --threads 1), and optionally a peer solver,
# over set 1 7x7, 8x8 and 12x6 and generated 7x7 and 8x8 (Owen's colour counts), 5 seeds.
# One JSON line per run is appended to OUT as it ends; rerun with the same OUT to resume.
#
#   benches/results/first-solution/first-solution-bench.sh benches/results/first-solution.jsonl
#
# Environment:
#   CONCUR      the binary (default target/release/concur)
#   PUZZLES     the shared puzzle folder (default ../shared/puzzles)
#   CAP_SMALL   seconds per run on the 7x7s (default 120)
#   CAP_BIG     seconds per run on the 8x8s and the 12x6 (default 120)
#   SEEDS       default "1 2 3 4 5"
#   PEER_RUN    a command `PEER_RUN PUZZLE SEED CAP SOLUTION_OUT` that runs a peer solver
#               (built elsewhere; this script builds nothing) and prints one JSON object
#               {solved, startup_s, search_s}; its solution is checked with `concur verify`.
#   T2_CAP      with it, also `scan --threads 2` on set 1 8x8 with this cap (the 2-core target)
#   ONLY        puzzle names to run (default all), e.g. "set1-12x06 set1-08x08 gen-08x08-s1"
set -euo pipefail
OUT=${1:?usage: $0 OUT.jsonl}
CONCUR=${CONCUR:-target/release/concur}
PUZZLES=${PUZZLES:-../shared/puzzles}
CAP_SMALL=${CAP_SMALL:-120}
CAP_BIG=${CAP_BIG:-120}
SEEDS=${SEEDS:-1 2 3 4 5}
ONLY=${ONLY:-}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$(dirname "$OUT")"
touch "$OUT"
GEN=$(dirname "$OUT")/puzzles
mkdir -p "$GEN"
"$CONCUR" generate --width 7 --height 7 --seed 1 -o "$GEN/gen-07x07-s1.txt"
"$CONCUR" generate --width 8 --height 8 --seed 1 -o "$GEN/gen-08x08-s1.txt"
S1=$PUZZLES/brendan_owen/pieces_set_1
LIST=("set1-07x07 $S1/pieces_07x07.txt $CAP_SMALL" "gen-07x07-s1 $GEN/gen-07x07-s1.txt $CAP_SMALL"
    "set1-12x06 $S1/pieces_12x06.txt $CAP_BIG" "set1-08x08 $S1/pieces_08x08.txt $CAP_BIG"
    "gen-08x08-s1 $GEN/gen-08x08-s1.txt $CAP_BIG")
host=$(hostname)
now() { date +%s.%N; }
done_already() { grep -q "\"puzzle\":\"$1\",\"solver\":\"$2\",\"seed\":$3," "$OUT"; }
record() { # puzzle solver seed cap solved verified wall startup extra-json
    printf '{"puzzle":"%s","solver":"%s","seed":%s,"cap_s":%s,"solved":%s,"verified":%s,"wall_s":%.3f,"startup_s":%s,"host":"%s","at":"%s","run":%s}\n' \
        "$1" "$2" "$3" "$4" "$5" "$6" "$7" "$8" "$host" "$(date -u +%FT%TZ)" "$9" >>"$OUT"
    echo "$1 $2 seed $3: solved $5 verified $6 in $7 s (startup $8)" >&2
}
concur_run() { # name file cap seed solver args...
    local name=$1 file=$2 cap=$3 seed=$4 solver=$5
    shift 5
    done_already "$name" "$solver" "$seed" && return 0
    local sol=$WORK/sol.txt json=$WORK/out.json t0 t1 solved verified=false
    rm -f "$sol"
    t0=$(now)
    "$CONCUR" solve "$file" "$@" --seed "$seed" --time-limit "$cap" --json -o "$sol" >"$json" || true
    t1=$(now)
    solved=$(python3 -c 'import json,sys; print(str(json.load(open(sys.argv[1]))["solved"]).lower())' "$json")
    if [ "$solved" = true ] && "$CONCUR" verify "$file" "$sol" >/dev/null; then verified=true; fi
    record "$name" "$solver" "$seed" "$cap" "$solved" "$verified" "$(echo "$t1 - $t0" | bc)" null "$(cat "$json")"
}
peer_run() { # name file cap seed
    local name=$1 file=$2 cap=$3 seed=$4
    done_already "$name" peer "$seed" && return 0
    local sol=$WORK/peer.txt json=$WORK/peer.json solved verified=false
    rm -f "$sol"
    timeout $((${cap%.*} + 120)) $PEER_RUN "$file" "$seed" "$cap" "$sol" >"$json" 2>/dev/null || true
    [ -s "$json" ] || echo '{"solved": false, "startup_s": null, "search_s": null}' >"$json"
    read -r solved search startup < <(python3 -c 'import json,sys
lines = [l for l in open(sys.argv[1]).read().splitlines() if l.startswith("{")]
d = json.loads(lines[-1]) if lines else {}
na = lambda v: "null" if v is None else v
print(str(d.get("solved", False)).lower(), na(d.get("search_s")), na(d.get("startup_s")))' "$json")
    if [ "$solved" = true ] && [ -s "$sol" ] && "$CONCUR" verify "$file" "$sol" >/dev/null; then verified=true; fi
    [ "$search" = null ] && search=$cap
    record "$name" peer "$seed" "$cap" "$solved" "$verified" "$search" "$startup" "$(grep '^{' "$json" | tail -n 1 || echo null)"
}
for entry in "${LIST[@]}"; do
    read -r name file cap <<<"$entry"
    if [ -n "$ONLY" ] && [[ " $ONLY " != *" $name "* ]]; then continue; fi
    for seed in $SEEDS; do
        concur_run "$name" "$file" "$cap" "$seed" scan --method scan --threads 1
        concur_run "$name" "$file" "$cap" "$seed" ac4 --method backtrack --ac ac4
        if [ -n "${PEER_RUN:-}" ]; then peer_run "$name" "$file" "$cap" "$seed"; fi
    done
done
if [ -n "${T2_CAP:-}" ]; then
    for seed in $SEEDS; do
        concur_run set1-08x08 "$S1/pieces_08x08.txt" "$T2_CAP" "$seed" scan-threads-2 --method scan --threads 2
    done
fi
