#!/usr/bin/env bash
# The daemon's whole-process CPU per /metrics series: starts neuron-monitord on DEVICE
# (sim:trn1n.32xlarge: ~2,900 series) at 1 Hz with /metrics on loopback, waits WARMUP seconds, then
# runs SCRAPES sequential curl scrapes with and without `Accept-Encoding: gzip`, reading the
# daemon's utime + stime before and after each set. Also prints the daemon's idle CPU over the same
# wall time (its sampling), so the scrapes' own share can be told apart. Each set is one curl
# process fetching /metrics SCRAPES times over one kept-alive connection, as Prometheus does; with
# "tls" the daemon serves HTTPS (a certificate made here with openssl) and the sets are tls and
# tls+gzip.
# Usage: bench/scrape_cpu.sh BUILD_DIR [DEVICE] [SCRAPES] [WARMUP] [plain|tls]
set -euo pipefail
build=${1:?usage: scrape_cpu.sh BUILD_DIR [DEVICE] [SCRAPES] [WARMUP]}
device=${2:-sim:trn1n.32xlarge}
scrapes=${3:-100}
warmup=${4:-20}
mode=${5:-plain}
dir=$(mktemp -d "${TMPDIR:-/tmp}/scrape-cpu-XXXXXX")
port=$((20000 + RANDOM % 20000))
cleanup() {
  [ -n "${daemon_pid:-}" ] && kill "$daemon_pid" 2>/dev/null && wait "$daemon_pid" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
scheme=http
curl_tls=()
cert="" key=""
if [ "$mode" = tls ]; then
  openssl req -x509 -new -noenc -newkey ec -pkeyopt ec_paramgen_curve:P-256 -keyout "$dir/key.pem" \
    -out "$dir/cert.pem" -days 2 -subj /CN=localhost -addext subjectAltName=DNS:localhost 2>/dev/null
  scheme=https cert=$dir/cert.pem key=$dir/key.pem
  curl_tls=(--cacert "$cert")
fi
printf '{"recorder": {"enabled": false}, "incidents": {"enabled": false}, "listeners": {"metrics":
  {"address": "127.0.0.1:%s", "tls": {"cert_file": "%s", "key_file": "%s"}}}}\n' \
  "$port" "$cert" "$key" >"$dir/d.json"
"$build/daemon/neuron-monitord" --config "$dir/d.json" --device "$device" --socket "$dir/d.sock" \
  >"$dir/daemon.log" 2>&1 &
daemon_pid=$!
for _ in $(seq 50); do [ -S "$dir/d.sock" ] && break; sleep 0.1; done
sleep "$warmup"
hz=$(getconf CLK_TCK)
ticks() { awk '{print $14 + $15}' "/proc/$daemon_pid/stat"; }
url="$scheme://localhost:$port/metrics"
series=$(curl -s "${curl_tls[@]}" "$url" | grep -vc '^#')
# scrape SET: runs the scrapes, prints "wall_seconds cpu_ticks"
scrape() {
  local t0 c0 t1 c1
  t0=$(date +%s.%N) c0=$(ticks)
  local args=(-s "${curl_tls[@]}")
  [[ $1 == *gzip ]] && args+=(-H 'Accept-Encoding: gzip')
  for _ in $(seq "$scrapes"); do args+=(-o /dev/null "$url"); done
  curl "${args[@]}"
  t1=$(date +%s.%N) c1=$(ticks)
  echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }') $((c1 - c0))"
}
idle() {  # the daemon's CPU over $1 seconds without scrapes, in ticks
  local c0
  c0=$(ticks)
  sleep "$1"
  echo $(($(ticks) - c0))
}
echo "device $device, $series series, $scrapes sequential scrapes each over $scheme, after ${warmup} s"
sets=(plain gzip)
[ "$mode" = tls ] && sets=(tls tls+gzip)
for set in "${sets[@]}"; do
  read -r wall cpu < <(scrape "$set")
  base=$(idle "$wall")
  awk -v s="$set" -v w="$wall" -v c="$cpu" -v b="$base" -v hz="$hz" -v n="$scrapes" -v k="$series" 'BEGIN {
    cpu = c / hz; idle = b / hz
    printf "%-8s %.2f s wall, daemon CPU %.2f s: %.2f ms per scrape, %.2f us per series (idle over the same wall time %.2f s; without it %.2f us per series)\n",
      s, w, cpu, 1000 * cpu / n, 1e6 * cpu / n / k, idle, 1e6 * (cpu - idle) / n / k }'
done
