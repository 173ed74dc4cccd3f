#!/usr/bin/env bash
# The record backtracker beside the campaign's scan (issue "the 8x8 question"): runs of
# jfbucas/libblackwood @b288f96 (a reimplementation of Joshua Blackwood's Eternity II
# backtracker, built outside this repository as ../shared/peers/README.md describes) through
# the shared driver `run.sh`, on seeds FIRST_SEED, FIRST_SEED+1, ..., pinned to core
# ${CORE:-1}, each capped at min(CAP, the seconds left to DEADLINE_EPOCH); it stops when less
# than 30 s are left. One JSON line per run is appended to OUT.jsonl, and a rerun resumes
# after the largest seed there (one OUT file per puzzle). Every board the peer returns is
# checked by `concur verify` (VERIFY).
#
#   PEERS=/tmp/peers benches/results/campaign-8x8/peer-campaign.sh \
#     ../shared/puzzles/brendan_owen/pieces_set_1/pieces_08x08.txt 3600 $(date -d '+1 hour' +%s) 1 \
#     benches/results/campaign-8x8/peer/libblackwood-08x08.jsonl
set -u
[ $# -eq 5 ] || { echo "usage: $0 PUZZLE CAP DEADLINE_EPOCH FIRST_SEED OUT.jsonl" >&2; exit 2; }
PUZ=$1; CAP=$2; DL=$3; SEED=$4; OUT=$5
D=${PEERS:-${TMPDIR:-/tmp}/peers}
[ -x "$D/run.sh" ] || { echo "no peer driver at $D/run.sh: see ../shared/peers/README.md" >&2; exit 2; }
VERIFY=${VERIFY:-$(pwd)/target/release/concur verify}; export VERIFY
# The peer lowers its own priority to niceness 19 unless NICE says otherwise; ours run at 0.
export NICE=${NICE:-0}
[ -f "$PUZ" ] || { echo "no puzzle $PUZ" >&2; exit 2; }
if [ -s "$OUT" ]; then
  m=$(python3 -c '
import json,sys
m=None
for l in open(sys.argv[1]):
    try: s=int(json.loads(l)["seed"])
    except Exception: continue
    m=s if m is None or s>m else m
print("" if m is None else m)' "$OUT")
  [ -n "$m" ] && SEED=$((m + 1)) && echo "resuming at seed $SEED" >&2
fi
SOL=$(mktemp /tmp/peers_campaign_XXXXXX.sol)
trap 'rm -f "$SOL"' EXIT
while :; do
  left=$(( DL - $(date +%s) ))
  [ "$left" -lt 30 ] && break
  cap=$(( CAP < left ? CAP : left ))
  line=$(SEED=$SEED taskset -c "${CORE:-1}" "$D/run.sh" blackwood "$PUZ" "$cap" "$SOL" | tail -1)
  python3 - "$line" "$SEED" "$cap" "$PUZ" >> "$OUT" <<'PY'
import json, re, sys, datetime, os
line, seed, cap, puz = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
t = line.split()
name = os.path.basename(puz)[:-4] if puz.endswith(".txt") else os.path.basename(puz)
st = t[2] if len(t) > 2 else "unsolved"
def num(pat, conv):
    m = re.search(pat, line)
    try: return conv(m.group(1)) if m else None
    except ValueError: return None
search = num(r"^\S+\s+\S+\s+\S+\s+([0-9.]+)", float)
depth = num(r"depth=([0-9]+)", int)
print(json.dumps({"solver": "libblackwood@b288f96", "puzzle": name, "seed": seed,
  "solved": st in ("solved", "unsolved-badsol"), "search_s": search if search is not None else float(cap),
  "build_s": num(r"build_s=([0-9.]+)", float), "cap_s": cap, "depth": depth,
  "verified": st == "solved",
  "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}))
PY
  echo "$line" >&2
  SEED=$((SEED + 1))
done
