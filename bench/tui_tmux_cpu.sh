#!/usr/bin/env bash
# Whole-process cost of terminal monitors at 200x60 in tmux: CPU (share of one core) and bytes
# written to the terminal per second over DURATION seconds, for neuron-top at 1 s refresh (both
# standalone and as a client of a separate daemon) beside htop -d 10 and btop measured the same way
# in the same run. Bytes are what the program wrote to its pty (/proc/PID/io wchar); changed cells
# are counted between tmux snapshots taken once per second (cells whose glyph or style differ), so
# they undercount a program that redraws more than once a second. The floor is the fewest bytes any
# writer would need for those changes (bench/screen_diff.py): glyphs, shortest moves, shortest SGRs.
#   bench/tui_tmux_cpu.sh build/release/tui/neuron-top [DURATION [PROGRAM...]]
# PROGRAMs (default all): neuron-top (standalone), top-client, htop, btop.
set -euo pipefail
top=$1
duration=${2:-60}
shift $(($# < 2 ? $# : 2))
programs=" ${*:-neuron-top top-client htop btop} "
wanted() { [[ $programs == *" $1 "* ]]; }
for p in $programs; do
  case $p in
    neuron-top | top-client | htop | btop) ;;
    *) echo "tui_tmux_cpu.sh: unknown program '$p' (neuron-top, top-client, htop, btop)" >&2; exit 2 ;;
  esac
done
sock="neuronmon-bench-$$"
tmx() { tmux -L "$sock" "$@"; }
tmp=$(mktemp -d)
daemon_pid=
cleanup() {
  tmx kill-server 2>/dev/null || true
  [ -n "$daemon_pid" ] && kill "$daemon_pid" 2>/dev/null && wait "$daemon_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
export LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color
hz=$(getconf CLK_TCK)
here=$(cd "$(dirname "$0")" && pwd)

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
  mkdir "$tmp/$name"
  tmx capture-pane -e -N -p -t "$name" >"$tmp/$name/0000"
  for ((i = 1; i <= duration; i++)); do
    sleep 1
    tmx capture-pane -e -N -p -t "$name" >"$tmp/$name/$(printf %04d "$i")"
  done
  read -r t1 < <(awk '{print $14+$15}' "/proc/$pid/stat")
  w1=$(awk '/^wchar/ {print $2}' "/proc/$pid/io")
  local changed floor
  read -r _ changed _ floor < <("$here/screen_diff.py" 200 60 "$tmp/$name"/*)
  awk -v n="$name" -v t=$((t1 - t0)) -v hz="$hz" -v d="$duration" -v b=$((w1 - w0)) -v c="$changed" \
    -v f="$floor" 'BEGIN { printf "%-11s cpu %5.2f%% of one core  %7.0f bytes/s  %6.0f changed cells/s  bytes per changed cell %6.2f  (floor %.2f: %.2fx)\n", n, 100*t/hz/d, b/d, c/d, (c>0 ? b/c : 0), (c>0 ? f/c : 0), (f>0 ? b/f : 0) }'
  tmx kill-session -t "$name"
}

# Standalone: the simulator and the daemon's core run inside neuron-top, so this is the whole cost.
if wanted neuron-top; then
  measure neuron-top "$top --standalone --device sim:trn2.48xlarge --scenario mixed --delay 1"
fi
# As a client of a separate daemon: what neuron-top itself costs on a node running the service.
if wanted top-client; then
  "$(dirname "$top")/../daemon/neuron-monitord" --record off --socket "$tmp/d.sock" --metrics-listen off \
    --device sim:trn2.48xlarge --scenario mixed --log-level warn &
  daemon_pid=$!
  for _ in $(seq 50); do [ -S "$tmp/d.sock" ] && break; sleep 0.1; done
  measure top-client "$top --socket $tmp/d.sock --delay 1"
fi
if wanted htop && command -v htop >/dev/null; then measure htop "htop -d 10"; fi
if wanted btop && command -v btop >/dev/null; then measure btop "btop"; fi
