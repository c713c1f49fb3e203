#!/usr/bin/env bash
# Whole-process cost of terminal monitors at 200x60 in tmux: CPU (share of one core) and bytes
# written to the terminal per second over DURATION seconds, for neuron-top at 1 s refresh beside
# htop -d 10 and btop measured the same way in the same run. Bytes are what the program wrote to
# its pty (/proc/PID/io wchar); "changed cells" is estimated from tmux snapshots once per second.
#   bench/tui_tmux_cpu.sh build/release/tui/neuron-top [DURATION]
set -euo pipefail
top=$1
duration=${2:-60}
sock="neuronmon-bench-$$"
tmx() { tmux -L "$sock" "$@"; }
trap 'tmx kill-server 2>/dev/null || true' EXIT
export LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color
hz=$(getconf CLK_TCK)

measure() {
  local name=$1 cmd=$2
  tmx new-session -d -s "$name" -x 200 -y 60 "$cmd"
  sleep 3
  local pane_pid pid
  pane_pid=$(tmx display -p -t "$name" '#{pane_pid}')
  pid=$pane_pid
  local t0 w0 t1 w1
  read -r t0 < <(awk '{print $14+$15}' "/proc/$pid/stat")
  w0=$(awk '/^wchar/ {print $2}' "/proc/$pid/io")
  local changed=0 prev cur
  prev=$(tmx capture-pane -p -t "$name")
  for ((i = 0; i < duration; i++)); do
    sleep 1
    cur=$(tmx capture-pane -p -t "$name")
    changed=$((changed + $(cmp -l <(printf '%s' "$prev") <(printf '%s' "$cur") 2>/dev/null | wc -l)))
    prev=$cur
  done
  read -r t1 < <(awk '{print $14+$15}' "/proc/$pid/stat")
  w1=$(awk '/^wchar/ {print $2}' "/proc/$pid/io")
  awk -v n="$name" -v t=$((t1 - t0)) -v hz="$hz" -v d="$duration" -v b=$((w1 - w0)) -v c="$changed" \
    'BEGIN { printf "%-12s cpu %5.2f%% of one core   %8.0f bytes/s   ~%6.0f changed cells/s   bytes per changed cell %.2f\n", n, 100*t/hz/d, b/d, c/d, (c>0 ? b/c : 0) }'
  tmx kill-session -t "$name"
}

measure neuron-top "$top --standalone --device sim:trn2.48xlarge --scenario mixed --delay 1"
command -v htop >/dev/null && measure htop "htop -d 10"
command -v btop >/dev/null && measure btop "btop"
