#!/usr/bin/env bash
# The crossing campaign (issue "The crossing on one machine"): one call of at most 7 minutes
# on a GPU machine. On each instance in turn, at the same time:
#   - the map (rrr) on the GPU in rate mode (--keep-going: every solution verified, recorded
#     and its trial restarted), with the kernel and trial count the throughput part measured
#     fastest (ASSIGN, TRIALS), as one ladder run on the device;
#   - the scan on all host cores but one (one run per core, through the ladder), new runs
#     starting as runs end until the instance's time is up.
# Instances and wall seconds (SECONDS_7X7 ... SECONDS_8X8; most of the call on the 8x8): set 1
# 7x7 (30 s), set 1 8x7 (45 s), a generated 8x7 (30 s), set 1 9x7 (45 s), set 1 8x8 (240 s).
# Every run appends its JSON line as it ends (the map's solutions as found, in its
# solutions file), so a kill at the call's limit keeps what finished. Then `concur report`
# pools work per solution per machine and `scripts/crossing.py` writes the table.
#
#   scripts/stage-binaries.sh stage           # here: binaries and puzzles into ./stage
#   scripts/device-campaign.sh [OUT_DIR]      # there, after (or without) scripts/device-bench.sh
#   REHEARSAL=1 scripts/device-campaign.sh DIR   # lavapipe: small boards, seconds, the call's shape
#
# Environment: STAGE (./stage), ASSIGN (gpu-jv), TRIALS (16384), RESTART_STALL (20000: well
# below a trial's budget, so that trapped segments do not inflate iterations per solution),
# HOST_NAME (the machine the scan's records name), SECONDS_7X7, SECONDS_8X7, SECONDS_G8X7,
# SECONDS_9X7, SECONDS_8X8.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-${OUT:-device-campaign}}
stage=${STAGE:-stage}
bin=$stage/concur
puz=$stage/puzzles
mkdir -p "$out"
export NODEVICE_SELECT=1
for f in "$bin" "$puz/pieces_07x07.txt" "$puz/pieces_08x08.txt"; do
  if [ ! -s "$f" ]; then
    echo "device-campaign: $f is missing: run scripts/stage-binaries.sh $stage first and carry $stage" >&2
    exit 2
  fi
done
all=$(nproc)
scan_cores=$(( all > 1 ? all - 1 : 1 ))
assign=${ASSIGN:-gpu-jv}
stall=${RESTART_STALL:-20000}
host=${HOST_NAME:-"$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //') x$all"}
if [ "${REHEARSAL:-0}" = 1 ]; then
  trials=${TRIALS:-64}
  plan="brendan_owen/pieces_set_1/pieces_05x05.txt:${SECONDS_7X7:-10} generate:5x4:1:${SECONDS_G8X7:-8} brendan_owen/pieces_set_1/pieces_06x06.txt:${SECONDS_8X8:-15}"
else
  trials=${TRIALS:-16384}
  plan="pieces_07x07.txt:${SECONDS_7X7:-30} pieces_08x07.txt:${SECONDS_8X7:-45} generate:8x7:1:${SECONDS_G8X7:-30} pieces_09x07.txt:${SECONDS_9X7:-45} pieces_08x08.txt:${SECONDS_8X8:-240}"
fi
# In a rehearsal the puzzles come from the shared sets (the small boards are not staged).
root=$puz
[ "${REHEARSAL:-0}" = 1 ] && root=${CONCUR_PUZZLES:-../shared/puzzles}
summary=$out/summary.txt
: >> "$summary"
step() { echo "== $(date -u +%H:%M:%S) $*" | tee -a "$summary"; }
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null || true
  echo "cores: $all (scan on $scan_cores); map: rrr --assign $assign --trials $trials --restart-stall $stall --keep-going"
  cat "$stage/commit.txt" 2>/dev/null || true; } | tee "$out/machine.txt"

# One ladder config for one instance and method (rrr on the device, or scan on a core).
config() { # file instance seconds method
  local inst=$1 secs=$2 method=$3 spec
  case $inst in
    generate:*) IFS=: read -r _ wh gs _ <<< "$inst:"; spec="generate = { width = ${wh%x*}, height = ${wh#*x}, seed = $gs }" ;;
    *) spec="path = \"$inst\"" ;;
  esac
  echo "runs = $([ "$method" = scan ] && echo 10000 || echo 1)"
  echo "seed = 4700"
  echo "machine = \"$host\""
  echo "[[budgets]]"
  echo "max_cells = 256"
  echo "time_limit = $secs"
  echo "[[instances]]"
  echo "$spec"
  echo "[[methods]]"
  if [ "$method" = scan ]; then
    echo 'method = "scan"'
    echo 'label = "scan"'
  else
    echo 'method = "rrr"'
    echo 'label = "rrr"'
    echo 'backend = "gpu"'
    echo "assign = \"$assign\""
    echo "trials = $trials"
    echo 'keep_going = true'
    echo "restart_stall = $stall"
  fi
}

for item in $plan; do
  secs=${item##*:}
  inst=${item%:*}
  name=$(echo "$inst" | tr '/:' '__')
  step "$inst: the map on the GPU and the scan on $scan_cores cores, $secs s"
  config "$inst" "$secs" rrr > "$out/map-$name.toml"
  config "$inst" "$secs" scan > "$out/scan-$name.toml"
  timeout $((secs + 60)) "$bin" ladder "$out/map-$name.toml" --out "$out/map" --resume --threads 1 \
    --puzzles "$root" --deadline "$((secs + 1))" > "$out/map-$name.log" 2>&1 &
  mp=$!
  timeout $((secs + 60)) "$bin" ladder "$out/scan-$name.toml" --out "$out/scan" --resume --threads "$scan_cores" \
    --puzzles "$root" --deadline "$((secs + 1))" > "$out/scan-$name.log" 2>&1 &
  sp=$!
  wait $mp; echo "  map rc $?: $(tail -1 "$out/map-$name.log")" | tee -a "$summary"
  wait $sp; echo "  scan rc $?: $(tail -1 "$out/scan-$name.log")" | tee -a "$summary"
done

step "report and table"
"$bin" report "$out/map" "$out/scan" -o "$out/report" > "$out/report.log" 2>&1
echo "  report rc $?" | tee -a "$summary"
if [ -s "$out/report/summary.json" ]; then
  # A rehearsal's boards are smaller than the table's 49 to 64 cells.
  cells=(); [ "${REHEARSAL:-0}" = 1 ] && cells=(--min-cells 1)
  python3 scripts/crossing.py "$out/report/summary.json" --host "$host" --cpu-cores "$scan_cores" \
    --cpu-machine "$host" --command "scripts/device-campaign.sh" "${cells[@]}" > "$out/crossing.md" 2>&1
  echo "  crossing rc $?" | tee -a "$summary"
  cat "$out/crossing.md" >> "$summary"
fi
step "done"
