#!/usr/bin/env bash
# neuron-top's cluster view against many daemons on loopback (each its own neuron-monitord process,
# plaintext loopback TCP with a token, so neuron-top runs with --insecure; each simulates one node
# of a cluster-straggler job).
#
#   bench/cluster_top.sh BUILD follow [N [DURATION]]
#     N daemons (default 256); prints how long `neuron-top --once --hosts` takes until every host's
#     row is filled (summary and verdict), then runs the interactive view in a 200x60 tmux pane for
#     DURATION seconds (default 60) at a 1 s refresh and prints its CPU (share of one core, all
#     threads, from /proc/PID/stat), RSS and peak RSS (VmRSS, VmHWM).
#   bench/cluster_top.sh BUILD detect N straggler|hang
#     N daemons of cluster-straggler (node 2 slows down at 60 s) or cluster-hang (node 3's rank 5
#     stops joining at 60 s), at real-time speed; polls `neuron-top --once` every second and prints
#     how long after the fault the cluster verdict names the node (ip-10-0-0-6 / ip-10-0-0-7).
#
# Every daemon and tmux server it starts is stopped on exit. Ports BASE..BASE+N-1 (BASE=21000, or
# $CLUSTER_BENCH_PORT) must be free.
set -euo pipefail
build=$1
mode=$2
top="$build/tui/neuron-top"
daemon="$build/daemon/neuron-monitord"
base=${CLUSTER_BENCH_PORT:-21000}
tmp=$(mktemp -d)
sock="neuronmon-cluster-bench-$$"
tmx() { tmux -L "$sock" "$@"; }
pids=()
cleanup() {
  tmx kill-server 2>/dev/null || true
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
export LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color
hz=$(getconf CLK_TCK)
umask 077
echo "cluster-bench-token" >"$tmp/token"
# A minute of history is all the cluster view needs; it keeps 256 daemons' memory small.
echo "{\"auth_token_file\": \"$tmp/token\", \"history_retention\": \"1m\"}" >"$tmp/config.json"

# start_daemons N SCENARIO: node k listens on BASE+k.
start_daemons() {
  local n=$1 scenario=$2
  : >"$tmp/hosts"
  for ((k = 0; k < n; k++)); do
    "$daemon" --record off --config "$tmp/config.json" --socket "$tmp/n$k.sock" --listen "127.0.0.1:$((base + k))" \
      --metrics-listen off --device sim:trn1.32xlarge --scenario "$scenario" --node "$k" \
      --nodes "$n" --log-level warn 2>>"$tmp/daemons.log" &
    pids+=($!)
    echo "127.0.0.1:$((base + k))" >>"$tmp/hosts"
  done
  for ((k = 0; k < n; k++)); do
    for _ in $(seq 100); do [ -S "$tmp/n$k.sock" ] && break; sleep 0.1; done
    [ -S "$tmp/n$k.sock" ] || { echo "daemon $k did not start:" >&2; cat "$tmp/daemons.log" >&2; exit 1; }
  done
}

now() { date +%s.%N; }

case $mode in
  follow)
    n=${3:-256}
    duration=${4:-60}
    start_daemons "$n" cluster-straggler
    echo "$n daemons up (sim:trn1.32xlarge, cluster-straggler, node k of $n)"
    t0=$(now)
    COLUMNS=200 "$top" --once --hosts "$tmp/hosts" --token-file "$tmp/token" --insecure >"$tmp/once.txt"
    t1=$(now)
    filled=$(grep -c ' up .*trn1.32xlarge' "$tmp/once.txt" || true)
    awk -v a="$t0" -v b="$t1" -v f="$filled" -v n="$n" \
      'BEGIN { printf "neuron-top --once: %d of %d rows filled in %.2f s\n", f, n, b - a }'
    sed -n 1,2p "$tmp/once.txt"
    tmx new-session -d -s top -x 200 -y 60 "$top --hosts $tmp/hosts --token-file $tmp/token --insecure --delay 1"
    pid=$(tmx display -p -t top '#{pane_pid}')
    sleep 5
    read -r c0 < <(awk '{print $14+$15}' "/proc/$pid/stat")
    if [ -n "${CLUSTER_BENCH_PERF:-}" ]; then  # a profile of neuron-top instead of a plain wait
      perf record -q -F 499 -g -p "$pid" -o "$CLUSTER_BENCH_PERF" -- sleep "$duration" 2>/dev/null
    else
      sleep "$duration"
    fi
    read -r c1 < <(awk '{print $14+$15}' "/proc/$pid/stat")
    rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status")
    hwm=$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status")
    threads=$(awk '/^Threads/ {print $2}' "/proc/$pid/status")
    awk -v t=$((c1 - c0)) -v hz="$hz" -v d="$duration" -v r="$rss" -v h="$hwm" -v th="$threads" \
      'BEGIN { printf "neuron-top --hosts (%d s): cpu %.2f%% of one core, RSS %.1f MiB, peak %.1f MiB, %d threads\n", d, 100*t/hz/d, r/1024, h/1024, th }'
    tmx capture-pane -p -t top | sed -n 1,2p
    daemons_kib=0
    for p in "${pids[@]}"; do
      daemons_kib=$((daemons_kib + $(awk '/^VmRSS/ {print $2}' "/proc/$p/status")))
    done
    echo "daemons: $(awk -v k="$daemons_kib" -v n="$n" 'BEGIN { printf "%.1f MiB RSS each on average", k/1024/n }')"
    ;;
  detect)
    n=$3
    kind=$4
    case $kind in
      straggler) src=cluster-straggler; want="straggler node ip-10-0-0-6" ;;
      hang) src=cluster-hang; want="hang node ip-10-0-0-7" ;;
      *) echo "cluster_top.sh: detect straggler|hang" >&2; exit 2 ;;
    esac
    # The built-in scenario with its fault moved to 60 s (after the warm-up).
    here=$(cd "$(dirname "$0")/.." && pwd)
    sed -e 's/"start": "[0-9a-z]*"/"start": "60s"/' "$here/simdev/scenarios/$src.json" \
      | sed -e 's/"from": "125s"/"from": "65s"/' >"$tmp/$kind.json"
    t0=$(now)
    start_daemons "$n" "$tmp/$kind.json"
    named=
    while true; do
      t=$(now)
      elapsed=$(awk -v a="$t0" -v b="$t" 'BEGIN { printf "%.1f", b - a }')
      if awk -v e="$elapsed" 'BEGIN { exit !(e > 100) }'; then break; fi
      line=$(COLUMNS=200 "$top" --once --hosts "$tmp/hosts" --token-file "$tmp/token" --insecure | sed -n 2p)
      if [[ $line == " $want"* ]]; then
        named=$elapsed
        echo "at $elapsed s:$line"
        break
      fi
      sleep 1
    done
    if [ -z "$named" ]; then
      echo "$kind with $n daemons: never named"
      exit 1
    fi
    awk -v e="$named" -v n="$n" -v k="$kind" \
      'BEGIN { printf "%s with %d daemons: named %.1f s after the fault (60 s after the first daemon started)\n", k, n, e - 60 }'
    ;;
  *)
    echo "usage: cluster_top.sh BUILD follow [N [DURATION]] | detect N straggler|hang" >&2
    exit 2
    ;;
esac
