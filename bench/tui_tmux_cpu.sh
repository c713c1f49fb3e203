#!/usr/bin/env bash
# Whole-process cost of terminal monitors at 200x60 in tmux: CPU (share of one core) and bytes
# written to the terminal per second over DURATION seconds, for neuron-top at 1 s refresh (both
# standalone and as a client of a separate daemon) beside htop -d 10 and btop measured the same way
# in the same run. Bytes are what the program wrote to its pty (/proc/PID/io wchar); changed cells
# are counted between tmux snapshots taken once per second (cells whose glyph or style differ), so
# they undercount a program that redraws more than once a second.
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

# The number of cells that differ, in glyph or in style, between two screen captures taken with
# `capture-pane -e` (text with SGR sequences).
cells_changed() {
  python3 - "$1" "$2" <<'PY'
import re, sys

def cells(path):
    rows = []
    for line in open(path, encoding="utf-8", errors="replace").read().split("\n"):
        row, style = [], ()
        for m in re.finditer(r"\x1b\[([0-9;]*)m|\x1b[^m]*?[A-Za-z]|(.)", line):
            if m.group(2) is not None:
                row.append((m.group(2), style))
            elif m.group(1) is not None:
                params = m.group(1).split(";") if m.group(1) else ["0"]
                style = () if params[0] in ("", "0") else style + tuple(params)
                if params[0] in ("", "0") and len(params) > 1:
                    style = tuple(params[1:])
        rows.append(row)
    return rows

a, b = cells(sys.argv[1]), cells(sys.argv[2])
blank = (" ", ())
n = 0
for i in range(max(len(a), len(b))):
    x = a[i] if i < len(a) else []
    y = b[i] if i < len(b) else []
    for j in range(max(len(x), len(y))):
        if (x[j] if j < len(x) else blank) != (y[j] if j < len(y) else blank):
            n += 1
print(n)
PY
}

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
  local changed=0
  tmx capture-pane -e -p -t "$name" >"$tmp/prev"
  for ((i = 0; i < duration; i++)); do
    sleep 1
    tmx capture-pane -e -p -t "$name" >"$tmp/cur"
    changed=$((changed + $(cells_changed "$tmp/prev" "$tmp/cur")))
    mv "$tmp/cur" "$tmp/prev"
  done
  read -r t1 < <(awk '{print $14+$15}' "/proc/$pid/stat")
  w1=$(awk '/^wchar/ {print $2}' "/proc/$pid/io")
  awk -v n="$name" -v t=$((t1 - t0)) -v hz="$hz" -v d="$duration" -v b=$((w1 - w0)) -v c="$changed" \
    'BEGIN { printf "%-12s cpu %5.2f%% of one core   %8.0f bytes/s   ~%6.0f changed cells/s   bytes per changed cell %.2f\n", n, 100*t/hz/d, b/d, c/d, (c>0 ? b/c : 0) }'
  tmx kill-session -t "$name"
}

# Standalone: the simulator and the daemon's core run inside neuron-top, so this is the whole cost.
if wanted neuron-top; then
  measure neuron-top "$top --standalone --device sim:trn2.48xlarge --scenario mixed --delay 1"
fi
# As a client of a separate daemon: what neuron-top itself costs on a node running the service.
if wanted top-client; then
  "$(dirname "$top")/../daemon/neuron-monitord" --socket "$tmp/d.sock" --metrics-listen off \
    --device sim:trn2.48xlarge --scenario mixed --log-level warn &
  daemon_pid=$!
  for _ in $(seq 50); do [ -S "$tmp/d.sock" ] && break; sleep 0.1; done
  measure top-client "$top --socket $tmp/d.sock --delay 1"
fi
if wanted htop && command -v htop >/dev/null; then measure htop "htop -d 10"; fi
if wanted btop && command -v btop >/dev/null; then measure btop "btop"; fi
