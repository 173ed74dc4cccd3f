#!/bin/bash
# peer_run.sh SIZE SEED CAP_S: one run of the peer (eternity2.dev codegen row scan, built under
# $PEERS, default /tmp/peers2, one binary per size, built by hand as the README says) on set 1
# SIZE, one core (CORE); prints one line; a full board is checked with `concur verify` (CONCUR).
# Scratch files (the site JSON, the viewer link of each solution) go to $WORK (default /tmp/cmp).
set -u
PEERS=${PEERS:-/tmp/peers2}; WORK=${WORK:-/tmp/cmp}; D=$(cd "$(dirname "$0")" && pwd); mkdir -p $WORK
size=$1; seed=$2; cap=$3; core=${CORE:-1}
P=${PUZ:-/work/shared/puzzles/brendan_owen/pieces_set_1}; CONCUR=${CONCUR:?}
w=$((10#${size%x*})); h=$((10#${size#*x})); PEER=$PEERS/target_${w}x${h}/release/run_dfs_codegen_jit
J=$WORK/set1_$size.json; [ -f $J ] || python3 $D/to_json.py $P/pieces_$size.txt $J
load=$(cut -d' ' -f1 /proc/loadavg)
out=$(taskset -c $core $PEER --puzzle $J --opt native --chain2 --seed $seed --budget-s $cap 2>$WORK/peer_err_$$)
res=$(echo "$out" | grep '^RESULT'); best=$(echo "$out" | grep '^BEST ' | head -1)
g() { echo "$res" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
score=$(g score); nodes=$(g nodes); el=$(g elapsed_s); nps=$(g nps)
comp=$(sed -n 's/.*compiled generated engine in \([0-9.]*\)s.*/\1/p' $WORK/peer_err_$$); rm -f $WORK/peer_err_$$
max=$((2*w*h - w - h)); st=unsolved
if [ "${score:-0}" = "$max" ]; then
  link=$WORK/peer_${size}_$seed.link
  python3 - "$w" "$h" "$best" > $link <<'PY'
import sys
w, h, best = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3].split()[1:]
assert len(best) == w * h, len(best)
e = ''.join(''.join(chr(97 + (int(t) >> s & 255)) for s in (24, 16, 8, 0)) for t in best)
print(f"https://e2.bucas.name/#puzzle=concur&board_w={w}&board_h={h}&board_edges={e}&motifs_order=jblackwood")
PY
  if $CONCUR verify $P/pieces_$size.txt $link >/dev/null 2>&1; then st=solved; else st=bad-solution; fi
fi
echo "solver=peer puzzle=set1-$size seed=$seed status=$st search_s=$el nodes=$nodes nps=$nps compile_s=$comp score=$score/$max cap_s=$cap core=$core load=$load"
