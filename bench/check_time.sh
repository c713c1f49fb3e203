#!/usr/bin/env bash
# Wall time of `neuron-ls --check` (issue 40's targets: <= 200 ms reading a 16-device driver tree
# without a daemon, <= 50 ms against a daemon): writes DEVICE's driver tree with
# BUILD/bench/write_driver_tree, times RUNS checks that read it (no socket where clients look),
# then starts neuron-monitord on the same tree and times RUNS checks against it; prints the
# median and the slowest of each.
# Usage: bench/check_time.sh BUILD_DIR [DEVICE] [RUNS]
set -euo pipefail
build=${1:?usage: check_time.sh BUILD_DIR [DEVICE] [RUNS]}
device=${2:-sim:trn2.48xlarge}
runs=${3:-20}
dir=$(mktemp -d "${TMPDIR:-/tmp}/check-time-XXXXXX")
cleanup() {
  [ -n "${daemon_pid:-}" ] && kill "$daemon_pid" 2>/dev/null && wait "$daemon_pid" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
mkdir -p "$dir/runtime"
"$build/bench/write_driver_tree" "$dir/host" --device "$device" >/dev/null
export XDG_RUNTIME_DIR=$dir/runtime
# time_runs LABEL COMMAND...: the median and the slowest wall time of RUNS runs, in ms
time_runs() {
  local label=$1
  shift
  local times=() status
  for _ in $(seq "$runs"); do
    local t0 t1
    t0=$(date +%s%N)
    set +e
    "$@" >"$dir/out" 2>&1
    status=$?
    set -e
    t1=$(date +%s%N)
    times+=($(((t1 - t0) / 1000)))
  done
  printf '%s\n' "${times[@]}" | sort -n | awk -v label="$label" -v status="$status" -v line="$(head -c 100 "$dir/out")" \
    '{ t[NR] = $1 } END { printf "%-34s median %.1f ms, slowest %.1f ms (exit %d: %s)\n", label, t[int((NR + 1) / 2)] / 1000, t[NR] / 1000, status, line }'
}
time_runs "reading the driver tree" "$build/exporter/neuron-ls" --check --expect-devices 16 \
  --sysfs-root "$dir/host/sys" --proc-root "$dir/host/proc"
"$build/daemon/neuron-monitord" --record off --device neuron --sysfs-root "$dir/host/sys" \
  --proc-root "$dir/host/proc" --socket "$dir/d.sock" --metrics-listen off >"$dir/daemon.log" 2>&1 &
daemon_pid=$!
for _ in $(seq 50); do [ -S "$dir/d.sock" ] && break; sleep 0.1; done
sleep 2
time_runs "against a daemon" "$build/exporter/neuron-ls" --check --expect-devices 16 \
  --socket "$dir/d.sock"
