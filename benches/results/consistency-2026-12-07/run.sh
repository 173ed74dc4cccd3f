#!/bin/bash
# The consistency ladder measured rung by rung on set 1 (Brendan Owen's): complete counts of
# the 5x5, 6x5, 6x6 and 7x7, the first solution of the 6x6, 7x7 and 8x8, per level (capped at CAP seconds); one JSON line a run, appended to
# runs.jsonl with the level and the command. One run a core at a time (CORES).
#   CONCUR=target/release/concur P=../shared/puzzles/brendan_owen/pieces_set_1 bash run.sh
# GEN="06x06:1:7 07x07:1:9" adds generated puzzles with few solutions, WxH, seed and inner
# colours (`concur generate`; the hardness campaign's instances, whose complete counts are in
# benches/results/hardness/hardness-inputs/counts.jsonl; written to a temporary folder, the
# command kept in each line): every solution and the first, per level.
set -u
D=$(cd "$(dirname "$0")" && pwd); OUT=${OUT:-$D/runs.jsonl}
CONCUR=${CONCUR:-concur}; P=${P:-../shared/puzzles/brendan_owen/pieces_set_1}
LEVELS=("fc|--ac fc" "ac3|--ac ac3" "ac2001|--ac ac2001" "ac4|--ac ac4" "ac3+regin|--ac ac3 --alldiff regin" "ac3+sac|--ac ac3 --sac" "ac3+sac+regin|--ac ac3 --sac --alldiff regin" "fc+regin|--ac fc --alldiff regin" "ac3+pc|--ac ac3 --pc" "ac3+pc+regin|--ac ac3 --pc --alldiff regin" "ac3+blocks|--ac ac3 --blocks" "ac3+blocks+regin|--ac ac3 --blocks --alldiff regin")
# CORES: the cores the runs take in turn, one run a core at a time (default: 0 1).
read -r -a CORES <<< "${CORES:-0 1}"
one() {  # core size limit level flags [puzzle file] [what made it]
  local core=$1 size=$2 limit=$3 level=$4 flags=$5 file=${6:-$P/pieces_$2.txt} made=${7:-}
  local args="count $file --engine ac --order mrv-degree $flags --time-limit ${CAP:-300} --json"
  [ "$limit" != all ] && args="$args --limit $limit"
  local t0=$(date +%s.%N)
  local j=$(taskset -c $core $CONCUR $args 2>/dev/null)
  local t1=$(date +%s.%N)
  local line
  line=$(python3 -c "import json,sys; j=json.loads(sys.argv[1]); j.update(level=sys.argv[2], size=sys.argv[3], target=sys.argv[4], process_wall_s=round(float(sys.argv[6])-float(sys.argv[5]),3), command='concur '+sys.argv[7], cpu=sys.argv[8]); sys.argv[9] and j.update(puzzle=sys.argv[9]); print(json.dumps(j))" \
    "$j" "$level" "$size" "$limit" "$t0" "$t1" "$args" "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)" "$made")
  flock "$OUT.lock" bash -c 'printf "%s\n" "$0" >> "$1"' "$line" "$OUT"
}
jobs=()
for size in 05x05 06x05 06x06; do for lv in "${LEVELS[@]}"; do jobs+=("$size|all|$lv"); done; done
for lv in "${LEVELS[@]}"; do jobs+=("07x07|1|$lv"); done
for lv in "${LEVELS[@]}"; do jobs+=("08x08|1|$lv" "06x06|1|$lv" "07x07|all|$lv"); done
GENDIR=${TMPDIR:-/tmp}/concur-ladder-gen; mkdir -p "$GENDIR"
for g in ${GEN:-}; do
  IFS=: read -r size seed inner <<< "$g"; w=$((10#${size%%x*})); h=$((10#${size##*x}))
  made="concur generate --width $w --height $h --seed $seed --inner-colors $inner"
  f="$GENDIR/$size-$seed-i$inner.txt"
  [ -s "$f" ] || $CONCUR generate --width $w --height $h --seed $seed --inner-colors $inner -o "$f" >/dev/null
  for lv in "${LEVELS[@]}"; do jobs+=("gen-$size-$seed-i$inner|all|$lv|$f|$made" "gen-$size-$seed-i$inner|1|$lv|$f|$made"); done
done
i=0
for job in "${jobs[@]}"; do
  IFS='|' read -r size limit level flags file made <<< "$job"
  # ONLY: an extended regex over "size|limit|level" picks the jobs to run (default: all).
  [[ -n "${ONLY:-}" && ! "$size|$limit|$level" =~ $ONLY ]] && continue
  one "${CORES[$((i % ${#CORES[@]}))]}" "$size" "$limit" "$level" "$flags" "$file" "$made" &
  i=$((i + 1))
  if [ $((i % ${#CORES[@]})) -eq 0 ]; then wait; fi
done
wait
