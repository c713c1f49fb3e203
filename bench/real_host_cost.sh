#!/usr/bin/env bash
# The real-host backend's cost in the whole daemon: writes a simulated trn2.48xlarge (16 devices)
# as a Neuron driver tree (write_driver_tree), runs neuron-monitord --device neuron on it at 1 Hz
# with neuron-top (in tmux), neuron-monitor and a /metrics scraper (every 5 s) attached, and
# prints the daemon's CPU over DURATION seconds. With `sim` as the third argument the daemon
# samples sim:trn2.48xlarge instead, with the same clients: the difference is the real backend's.
# With `datastores` it reads a tree of 64 runtime processes (bench/scenarios/serving-per-core.json:
# one per logical core) with each runtime's datastore image (--datastore-root); `no-datastores`
# reads the same 64 processes from the driver's tree alone; `sim-serving` simulates that scenario
# (the daemon's own cost for 64 runtimes, with no backend reading anything).
# Usage: bench/real_host_cost.sh BUILD_DIR [DURATION] [neuron|sim|datastores|no-datastores|sim-serving]
set -euo pipefail
build=${1:?usage: real_host_cost.sh BUILD_DIR [DURATION]}
duration=${2:-60}
backend=${3:-neuron}
dir=$(mktemp -d "${TMPDIR:-/tmp}/real-host-cost-XXXXXX")
port=$((20000 + RANDOM % 20000))
session="real-host-cost-$$"
cleanup() {
  tmux kill-session -t "$session" 2>/dev/null || true
  [ -n "${monitor_pid:-}" ] && kill "$monitor_pid" 2>/dev/null || true
  [ -n "${daemon_pid:-}" ] && kill "$daemon_pid" 2>/dev/null && wait "$daemon_pid" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
extra=()
if [ "$backend" = datastores ] || [ "$backend" = no-datastores ]; then
  "$build/bench/write_driver_tree" "$dir" --datastores \
    --scenario "$(dirname "$0")/scenarios/serving-per-core.json"
  [ "$backend" = datastores ] && extra=(--datastore-root "$dir/datastore")
else
  "$build/bench/write_driver_tree" "$dir"
fi
device=neuron
[ "$backend" = sim ] && device=sim:trn2.48xlarge
if [ "$backend" = sim-serving ]; then
  device=sim:trn2.48xlarge
  extra=(--scenario "$(dirname "$0")/scenarios/serving-per-core.json")
fi
"$build/daemon/neuron-monitord" --record off --device "$device" --sysfs-root "$dir/sys" --proc-root "$dir/proc" \
  --neuron-monitor "" --socket "$dir/d.sock" --metrics-listen "127.0.0.1:$port" "${extra[@]}" \
  >"$dir/daemon.log" 2>&1 &
daemon_pid=$!
for _ in $(seq 50); do [ -S "$dir/d.sock" ] && break; sleep 0.1; done
"$build/exporter/neuron-monitor" --socket "$dir/d.sock" >/dev/null 2>&1 &
monitor_pid=$!
tmux new-session -d -s "$session" -x 200 -y 60 "$build/tui/neuron-top --socket $dir/d.sock"
sleep 5  # warm up: history, subscriptions
ticks() { awk '{print $14 + $15}' "/proc/$daemon_pid/stat"; }
start=$(ticks)
for _ in $(seq $((duration / 5))); do
  curl -s "http://127.0.0.1:$port/metrics" >/dev/null
  sleep 5
done
end=$(ticks)
hz=$(getconf CLK_TCK)
awk -v t=$((end - start)) -v hz="$hz" -v d="$duration" \
  -v dev="$device" \
  'BEGIN { printf "neuron-monitord --device %s: %.3f%% of one core over %d s\n", dev, 100 * t / hz / d, d }'
grep -m1 sampling "$dir/daemon.log"
