#!/usr/bin/env bash
# Long-lived /events subscribers against a real daemon: starts neuron-monitord on DEVICE at 1 Hz
# (scenario ecc-degradation, so its device 3 raises health and hardware-error events; the
# reloads events_load sends add a daemon event every 5 s), with /metrics on loopback, and runs
# build/bench/events_load against it: BASELINE of scrapes alone, then SUBSCRIBERS Server-Sent
# Events streams for DURATION (bench/README.md, "Events"). The daemon keeps 20 s of history (as
# bench/soak's does), so its memory is at its steady state before the baseline ends and what
# grows after is what the subscribers cost.
# Usage: bench/events_soak.sh BUILD_DIR [SUBSCRIBERS] [DURATION] [BASELINE] [DEVICE]
set -euo pipefail
build=${1:?usage: events_soak.sh BUILD_DIR [SUBSCRIBERS] [DURATION] [BASELINE] [DEVICE]}
subscribers=${2:-1000}
duration=${3:-10m}
baseline=${4:-2m}
device=${5:-sim:trn2.48xlarge}
dir=$(mktemp -d "${TMPDIR:-/tmp}/events-soak-XXXXXX")
port=$((20000 + RANDOM % 20000))
cleanup() {
  [ -n "${daemon_pid:-}" ] && kill "$daemon_pid" 2>/dev/null && wait "$daemon_pid" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
ulimit -n "$(ulimit -Hn)"
printf '{"history_retention": "20s"}\n' >"$dir/config.json"
"$build/daemon/neuron-monitord" --record off --device "$device" --scenario ecc-degradation \
  --config "$dir/config.json" --socket "$dir/d.sock" --metrics-listen "127.0.0.1:$port" \
  >"$dir/daemon.log" 2>&1 &
daemon_pid=$!
for _ in $(seq 50); do [ -S "$dir/d.sock" ] && break; sleep 0.1; done
sleep 5
# EVENTS_LOAD_ARGS: more of events_load's flags, e.g. "--subscriber-nice 19".
# shellcheck disable=SC2086 # split on purpose
"$build/bench/events_load" --port "$port" --pid "$daemon_pid" --subscribers "$subscribers" \
  --duration "$duration" --baseline "$baseline" --socket "$dir/d.sock" ${EVENTS_LOAD_ARGS:-}
echo "daemon log: $(grep -c . "$dir/daemon.log") lines, $(grep -ci 'error\|warn' "$dir/daemon.log" || true) errors or warnings"
grep -i 'error\|warn' "$dir/daemon.log" | sort | uniq -c | sort -rn | head -5 || true
