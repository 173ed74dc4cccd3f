# Sourced by up.sh and down.sh: the pid files' one reader.

# Prints the pid recorded in pid file $1 if that process is alive and named $2.
live_pid() {
  local pid
  [[ -s $1 ]] || return 1
  pid=$(<"$1")
  [[ $pid =~ ^[0-9]+$ ]] && [[ $(cat "/proc/$pid/comm" 2>/dev/null) == "$2" ]] || return 1
  echo "$pid"
}
