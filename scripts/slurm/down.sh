#!/usr/bin/env bash
# Stops the single-node Slurm cluster that scripts/slurm/up.sh DIR started: slurmd, then
# slurmctld, by the pids in DIR/run/*.pid (TERM, up to 30 s, then KILL). Cancels no jobs;
# a job still running keeps its slurmstepd and processes (a warning lists them), so let jobs
# finish or scancel them first. Stops munged only if up.sh started it (DIR/run/
# munged.started-by-up) and no other slurmctld/slurmd runs on the host. Idempotent; kills
# only processes whose pid file is under DIR, whose name matches and that read DIR's
# slurm.conf. Usage: scripts/slurm/down.sh DIR
set -euo pipefail

log() { echo "down.sh: $*" >&2; }
(($# == 1)) || { echo "usage: $0 DIR" >&2; exit 2; }
if [[ ! -d $1/run ]]; then
  log "nothing to stop in $1"
  exit 0
fi
DIR=$(realpath "$1")
CONF=$DIR/slurm.conf

# shellcheck source=scripts/slurm/pid.sh
. "$(dirname "$0")/pid.sh"

# True if process $1 was started for DIR (SLURM_CONF in its environment, or -f CONF).
ours() {
  tr '\0' '\n' <"/proc/$1/environ" 2>/dev/null | grep -qxF "SLURM_CONF=$CONF" ||
    tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -qF -- "-f $CONF"
}

# True while process $1 exists and is not a zombie (PID 1 here may reap late).
alive() {
  local st
  st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
  [[ -n $st && $st != Z ]]
}

# TERM, wait up to 30 s, then KILL.
stop() { # name, pid file
  local name=$1 pidf=$2 pid
  if ! pid=$(live_pid "$pidf" "$name"); then
    log "$name not running"
    rm -f "$pidf"
    return
  fi
  if ! ours "$pid"; then
    log "WARNING: pid $pid ($name) does not use $CONF; not touching it"
    return
  fi
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 300); do
    alive "$pid" || break
    sleep 0.1
  done
  if alive "$pid"; then
    log "$name (pid $pid) ignored TERM for 30 s; sending KILL"
    kill -KILL "$pid" 2>/dev/null || true
    while alive "$pid"; do sleep 0.1; done
  fi
  rm -f "$pidf"
  log "stopped $name (pid $pid)"
}

# Warn about jobs that will outlive the daemons (only possible while slurmctld answers).
if [[ -f $CONF ]] && live_pid "$DIR/run/slurmctld.pid" slurmctld >/dev/null; then
  jobs=$(SLURM_CONF=$CONF timeout 5 squeue -h -t RUNNING,COMPLETING -o %i 2>/dev/null || true)
  [[ -z $jobs ]] || log "WARNING: jobs still running; their processes survive: ${jobs//$'\n'/ }"
fi

stop slurmd "$DIR/run/slurmd.pid"
stop slurmctld "$DIR/run/slurmctld.pid"

# munged: only if up.sh started it and no slurm daemon (of any cluster) still needs it.
marker=$DIR/run/munged.started-by-up
if [[ -f $marker ]]; then
  if pid=$(live_pid "$marker" munged); then
    # -r: live processes only; zombies linger here since PID 1 reaps late.
    if pgrep -x -r D,R,S,T slurmctld >/dev/null || pgrep -x -r D,R,S,T slurmd >/dev/null; then
      # Keep the marker, so that a later down.sh DIR may still stop it.
      log "leaving munged (pid $pid) running: other slurm daemons use it"
      exit 0
    fi
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 100); do alive "$pid" || break; sleep 0.1; done
    log "stopped munged (pid $pid)"
  fi
  rm -f "$marker"
fi
