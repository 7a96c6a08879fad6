#!/usr/bin/env bash
# A one-host Slurm cluster living in one directory, for tests and for trying srun by hand:
#   slurm_cluster.sh start DIR CTLD_PORT SLURMD_PORT   munged, slurmctld and slurmd, own key
#   slurm_cluster.sh stop DIR                          stops them by their pid files
# After start, `SLURM_CONF=DIR/slurm.conf srun -n 2 ...` runs on it. Every daemon, socket,
# key, state and log stays in DIR, so it does not touch (or need) a system-wide Slurm.
# Needs root (slurmd runs tasks as their user) and Debian's slurm-wlm and munge. Each wait
# is bounded; on failure it prints why, with the daemon's log, and exits 1.
set -euo pipefail

usage() {
  echo "usage: $0 start DIR CTLD_PORT SLURMD_PORT | stop DIR" >&2
  exit 2
}

fail() {
  echo "slurm_cluster: $*" >&2
  exit 1
}

# Waits up to $1 tenths of a second for the command after it to succeed.
wait_for() {
  local tenths=$1
  shift
  for ((i = 0; i < tenths; i++)); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.1
  done
  return 1
}

show_log() {
  if [[ -f $1 ]]; then
    echo "--- last lines of $1:" >&2
    tail -n 20 "$1" >&2
  fi
}

start() {
  local dir=$1 ctld_port=$2 slurmd_port=$3
  ((EUID == 0)) || fail "needs root: slurmd starts the tasks as their user"
  for tool in munged mungekey slurmctld slurmd srun sinfo; do
    command -v "$tool" >/dev/null ||
      fail "$tool is not installed (scripts/setup installs slurm-wlm and munge)"
  done
  id munge >/dev/null 2>&1 || fail "no 'munge' user (the munge package creates it)"

  mkdir -p "$dir"/{munge,state,spool,log}
  # munged runs as munge and must reach its own directory through this one.
  chmod 755 "$dir"
  chown munge:munge "$dir/munge"
  chmod 755 "$dir/munge"  # munged insists that everyone may reach its socket
  runuser -u munge -- test -w "$dir/munge" ||
    fail "the munge user cannot reach $dir/munge: every directory above it must be" \
      "searchable by all (chmod go+x)"
  local out
  out=$(runuser -u munge -- mungekey --create --keyfile="$dir/munge/munge.key" --force 2>&1) ||
    fail "mungekey could not create a key in $dir/munge: $out"
  runuser -u munge -- munged --socket="$dir/munge/munge.socket" \
    --key-file="$dir/munge/munge.key" --pid-file="$dir/munge/munged.pid" \
    --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/munged.seed" ||
    { show_log "$dir/munge/munged.log"; fail "munged did not start"; }
  wait_for 100 test -S "$dir/munge/munge.socket" ||
    { show_log "$dir/munge/munged.log"; fail "munged's socket did not appear within 10 s"; }

  local host node_line
  host=$(hostname -s)
  node_line=$(slurmd -C | head -n 1) || fail "slurmd -C could not describe this host"
  cat >"$dir/slurm.conf" <<CONF
ClusterName=zerotrain-test
SlurmctldHost=${host}(127.0.0.1)
SlurmctldPort=${ctld_port}
SlurmdPort=${slurmd_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=${dir}/munge/munge.socket
StateSaveLocation=${dir}/state
SlurmdSpoolDir=${dir}/spool
SlurmctldPidFile=${dir}/slurmctld.pid
SlurmdPidFile=${dir}/slurmd.pid
SlurmctldLogFile=${dir}/log/slurmctld.log
SlurmdLogFile=${dir}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
${node_line} NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=test Nodes=${host} Default=YES MaxTime=INFINITE State=UP
CONF
  export SLURM_CONF="$dir/slurm.conf"
  slurmctld -c || { show_log "$dir/log/slurmctld.log"; fail "slurmctld did not start"; }
  slurmd || { show_log "$dir/log/slurmd.log"; fail "slurmd did not start"; }
  # Ready once the node is idle: slurmctld answers and slurmd has registered.
  if ! wait_for 300 sh -c "sinfo -h -N -o %t | grep -qx idle"; then
    show_log "$dir/log/slurmctld.log"
    show_log "$dir/log/slurmd.log"
    fail "the node did not become idle within 30 s (sinfo: $(sinfo -h -N -o '%N %t %E' 2>&1))"
  fi
}

# Whether none of the given pids runs any more.
all_gone() {
  local pid
  for pid in "$@"; do
    if kill -0 "$pid" 2>/dev/null; then return 1; fi
  done
  return 0
}

# Sends SIGTERM to the pids in the given pid files at once (slurmctld takes seconds to
# shut down; in parallel the others do not add theirs), then SIGKILL to any left after
# 5 s. A missing file is a daemon that never started.
stop_daemons() {
  local pids=() pid_file pid
  for pid_file in "$@"; do
    [[ -f $pid_file ]] || continue
    pid=$(cat "$pid_file")
    [[ $pid =~ ^[0-9]+$ ]] || continue
    kill -TERM "$pid" 2>/dev/null && pids+=("$pid")
  done
  ((${#pids[@]} > 0)) || return 0
  if ! wait_for 50 all_gone "${pids[@]}"; then
    for pid in "${pids[@]}"; do
      if kill -0 "$pid" 2>/dev/null; then
        echo "slurm_cluster: pid $pid ignored SIGTERM for 5 s; killing it" >&2
        kill -KILL "$pid" 2>/dev/null || true
      fi
    done
  fi
}

stop() {
  local dir=$1
  # Steps still running (a test that gave up on srun) end before their slurmd does.
  if [[ -f $dir/slurm.conf && -f $dir/slurmctld.pid ]]; then
    export SLURM_CONF="$dir/slurm.conf"
    scancel --partition=test --full >/dev/null 2>&1 || true
    wait_for 50 sh -c '[ -z "$(squeue -h -o %i 2>/dev/null)" ]' ||
      echo "slurm_cluster: jobs still listed 5 s after scancel: $(squeue -h 2>&1)" >&2
  fi
  stop_daemons "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munge/munged.pid"
}

case "${1:-}" in
  start) (($# == 4)) || usage; start "$2" "$3" "$4" ;;
  stop) (($# == 2)) || usage; stop "$2" ;;
  *) usage ;;
esac
