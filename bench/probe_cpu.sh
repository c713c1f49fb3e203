#!/usr/bin/env bash
# The daemon's CPU per probe request: starts neuron-monitord on DEVICE at 1 Hz with /metrics on
# loopback, waits WARMUP seconds (so /readyz is ready), then has one curl process send REQUESTS
# requests to /healthz, then to /readyz (text), then /readyz with `Accept: application/json`, over
# one kept-alive connection, reading the daemon's utime + stime before and after each set, and the
# daemon's idle CPU over the same wall time, which is subtracted.
# Usage: bench/probe_cpu.sh BUILD_DIR [DEVICE] [REQUESTS] [WARMUP]
set -euo pipefail
build=${1:?usage: probe_cpu.sh BUILD_DIR [DEVICE] [REQUESTS] [WARMUP]}
device=${2:-sim:trn2.48xlarge}
requests=${3:-20000}
warmup=${4:-5}
dir=$(mktemp -d "${TMPDIR:-/tmp}/probe-cpu-XXXXXX")
port=$((20000 + RANDOM % 20000))
cleanup() {
  [ -n "${daemon_pid:-}" ] && kill "$daemon_pid" 2>/dev/null && wait "$daemon_pid" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
"$build/daemon/neuron-monitord" --record off --device "$device" --socket "$dir/d.sock" \
  --metrics-listen "127.0.0.1:$port" >"$dir/daemon.log" 2>&1 &
daemon_pid=$!
for _ in $(seq 50); do [ -S "$dir/d.sock" ] && break; sleep 0.1; done
sleep "$warmup"
hz=$(getconf CLK_TCK)
ticks() { awk '{print $14 + $15}' "/proc/$daemon_pid/stat"; }
# run NAME PATH [HEADER]: the set's requests, then as long idle; prints µs of daemon CPU a request
run() {
  local name=$1 path=$2 header=${3:-}
  : >"$dir/urls"
  for _ in $(seq "$requests"); do
    printf 'url = "http://127.0.0.1:%s%s"\noutput = "/dev/null"\n' "$port" "$path" >>"$dir/urls"
  done
  local args=(-s -K "$dir/urls")
  [ -n "$header" ] && args+=(-H "$header")
  local t0 c0 t1 c1 c2
  t0=$(date +%s.%N) c0=$(ticks)
  curl "${args[@]}"
  t1=$(date +%s.%N) c1=$(ticks)
  sleep "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')"
  c2=$(ticks)
  awk -v n="$requests" -v busy=$((c1 - c0)) -v idle=$((c2 - c1)) -v hz="$hz" -v w="$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" -v name="$name" \
    'BEGIN { printf "%-28s %d requests in %.1f s: %.1f us of daemon CPU each (%d ticks busy, %d idle)\n", name, n, w, (busy - idle) / hz / n * 1e6, busy, idle }'
}
run /healthz /healthz
run /readyz /readyz
run "/readyz (JSON)" /readyz "Accept: application/json"
