#!/usr/bin/env bash
# Records a live run and replays it, as users would: neuron-monitord keeps its archive while
# neuron-monitor prints live documents; then neuron-monitor --replay prints the recording's
# documents, which must contain every live document byte for byte, in order. A daemon killed with
# SIGKILL leaves an archive that still replays. Temp directory only; every process is stopped.
# neuron-top --replay is driven in tmux: pause, step, seek, jump to a time, change speed.
# usage: record_replay.sh <neuron-monitord> <neuron-monitor> <neuron-ls> <neuron-top>
set -euo pipefail
daemon=$1 monitor=$2 ls=$3 top=$4
tmp=$(mktemp -d)
pids=()
sock="neuronmon-replay-$$"
tmx() { tmux -L "$sock" "$@"; }
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  tmx kill-server 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; cat "$tmp"/*.log 2>/dev/null | tail -20; exit 1; }

# Ten minutes of 100 ms snapshots of a trn1.32xlarge exceed the default history budget; two do not.
echo '{"history_retention": "2m"}' >"$tmp/daemon.json"
# The documents every second, as AWS's config file says.
cat >"$tmp/monitor.json" <<'JSON'
{"period": "1s",
 "neuron_runtimes": [{"tag_filter": ".*", "metrics": [{"type": "neuroncore_counters"},
   {"type": "memory_used"}, {"type": "execution_stats"}, {"type": "bottleneck_analysis"}]}],
 "system_metrics": [{"type": "memory_info"}, {"type": "neuron_hw_counters"}]}
JSON

start_daemon() {  # start_daemon <name> <args...>
  local name=$1
  shift
  "$daemon" --config "$tmp/daemon.json" --socket "$tmp/$name.sock" --metrics-listen off \
    --period 100ms "$@" >"$tmp/$name.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do [ -S "$tmp/$name.sock" ] && return 0; sleep 0.1; done
  fail "$name never listened"
}

# 1. Live, recorded.
start_daemon live --device sim:trn1.32xlarge --scenario input-bound --speed 10 --record "$tmp/archive"
live_pid=${pids[-1]}
"$monitor" --socket "$tmp/live.sock" -c "$tmp/monitor.json" --count 12 >"$tmp/live.json" \
  2>"$tmp/monitor.log" || fail "live neuron-monitor failed"
kill -TERM "$live_pid"
wait "$live_pid" || fail "the daemon did not stop cleanly"
[ "$(wc -l <"$tmp/live.json")" -eq 12 ] || fail "expected 12 live documents"
ls "$tmp/archive"/*.nmrec >/dev/null || fail "no archive files"

# 2. Replayed: every live document but the first (which carries every group at once) is in the
# replay, in order, byte for byte.
"$monitor" --replay "$tmp/archive" -c "$tmp/monitor.json" >"$tmp/replay.json" 2>"$tmp/replay.log" ||
  fail "neuron-monitor --replay failed: $(cat "$tmp/replay.log")"
[ ! -s "$tmp/replay.log" ] || fail "replay notices: $(cat "$tmp/replay.log")"
python3 - "$tmp/live.json" "$tmp/replay.json" <<'PY' || fail "the replay differs from the live run"
import json, sys
live = open(sys.argv[1]).read().splitlines()[1:]
replay = open(sys.argv[2]).read().splitlines()
start = replay.index(live[0]) if live[0] in replay else -1
if start < 0:
    sys.exit("the second live document is not in the replay")
for i, line in enumerate(live):
    if start + i >= len(replay) or replay[start + i] != line:
        sys.exit(f"live document {i + 2} differs from replay document {start + i + 1}")
doc = json.loads(live[-1])
verdicts = [f["kind"] for r in doc["neuron_runtime_data"]
            for f in r["report"]["bottleneck_analysis"]["findings"]]
if "input_bound" not in verdicts:
    sys.exit(f"expected the input_bound verdict live, got {verdicts}")
print(f"{len(live)} live documents found in order among {len(replay)} replayed")
PY

# A range: --from/--to select documents, and neuron-ls shows the recorded inventory.
n=$("$monitor" --replay "$tmp/archive" -c "$tmp/monitor.json" --from +5s --to +8s | wc -l)
[ "$n" -ge 3 ] && [ "$n" -le 5 ] || fail "--from +5s --to +8s gave $n documents"
"$ls" --replay "$tmp/archive" >"$tmp/ls.txt" 2>"$tmp/ls.log" || fail "neuron-ls --replay failed"
grep -q "trn1.32xlarge" "$tmp/ls.txt" || fail "neuron-ls --replay does not show the instance"

# 3. Served as if live: neuron-monitord --replay, read by neuron-monitor over the socket.
start_daemon served --replay "$tmp/archive" --from +2s --speed 5
"$monitor" --socket "$tmp/served.sock" -c "$tmp/monitor.json" --count 3 >"$tmp/served.json" \
  2>>"$tmp/monitor.log" || fail "neuron-monitor against a replaying daemon failed"
grep -q '"input_bound"' "$tmp/served.json" || fail "the replaying daemon lost the verdict"
kill -TERM "${pids[-1]}"

# 3b. A client's own recording (--record FILE): one portable file that replays like the archive.
start_daemon client --device sim:trn1.32xlarge --scenario collective-bound --speed 10 --record off
"$monitor" --socket "$tmp/client.sock" -c "$tmp/monitor.json" --count 8 --record "$tmp/mine.nmrec" \
  >"$tmp/client-live.json" 2>>"$tmp/monitor.log" || fail "neuron-monitor --record failed"
[ -s "$tmp/mine.nmrec" ] || fail "neuron-monitor --record wrote no file"
"$monitor" --socket "$tmp/client.sock" --count 1 --record "$tmp/mine.nmrec" >/dev/null \
  2>"$tmp/exists.log" && fail "--record overwrote an existing file"
grep -q "already exists" "$tmp/exists.log" || fail "no 'already exists' error: $(cat "$tmp/exists.log")"
"$monitor" --replay "$tmp/mine.nmrec" -c "$tmp/monitor.json" >"$tmp/client-replay.json" ||
  fail "replaying neuron-monitor's own recording failed"
python3 - "$tmp/client-live.json" "$tmp/client-replay.json" <<'PY' || fail "a --record file replays differently"
import sys
live = open(sys.argv[1]).read().splitlines()[2:]  # the first two may predate the recording
replay = open(sys.argv[2]).read().splitlines()
missing = [i for i, line in enumerate(live) if line not in replay]
if missing:
    sys.exit(f"live documents {missing} are not in the replay of the --record file")
print(f"{len(live)} live documents found in the replay of the client's recording")
PY

# 4. neuron-top --replay in tmux, keys as a person types them.
screen() { tmx capture-pane -p -t top; }
wait_for() {  # wait_for <text> [seconds]
  for _ in $(seq $((${2:-15} * 10))); do screen | grep -qF -- "$1" && return 0; sleep 0.1; done
  echo "--- screen ---"; screen; fail "neuron-top never showed: $1"
}
shown() {  # the recorded time in the title, as seconds since the epoch (with a fraction)
  local t
  t=$(screen | head -1 | grep -oE 'REPLAY [0-9-]+ [0-9:.]+Z' | cut -d' ' -f2-)
  date -u -d "${t%Z}" +%s.%N
}
# The shown time once it differs from $1 (a seek replays the minute before its target through the
# daemon's code, which takes a while in a sanitizer build), or $1 after 10 s.
shown_after() {
  local now
  for _ in $(seq 100); do
    now=$(shown)
    [ "$now" != "$1" ] && { echo "$now"; return 0; }
    sleep 0.1
  done
  echo "$1"
}
export LANG=C.UTF-8 LC_ALL=C.UTF-8
tmx new-session -d -s top -x 150 -y 45 "bash --norc --noprofile"
tmx send-keys -t top "PS1='PROMPT> '; clear" Enter
wait_for "PROMPT>"
tmx send-keys -t top "$top --replay $tmp/archive --speed 1; echo EXIT=\$?" Enter
wait_for "REPLAY "
wait_for "vit-huge"
tmx send-keys -t top Space
wait_for " PAUSED"
tmx send-keys -t top Home
sleep 0.5
start=$(shown)
tmx send-keys -t top .
step=$(shown_after "$start")
awk -v a="$start" -v b="$step" 'BEGIN { exit !(b - a > 0.05 && b - a < 1.5) }' ||
  fail "'.' did not step one 100ms sample ($start -> $step)"
tmx send-keys -t top ']'
ahead=$(shown_after "$step")
awk -v a="$start" -v b="$ahead" 'BEGIN { exit !(b - a > 10.05 && b - a < 11.5) }' ||
  fail "']' did not seek 10 s ($start -> $ahead)"
tmx send-keys -t top '['
back=$(shown_after "$ahead")
# A seek shows the first sample at or after its target: the next sample, or after a gap when the
# busy daemon skipped ticks (they are not recorded).
awk -v a="$start" -v b="$back" 'BEGIN { exit !(b - a > 0.05 && b - a < 1.5) }' ||
  fail "'[' did not seek back 10 s ($start -> $back)"
tmx send-keys -t top t
wait_for "jump to"
tmx send-keys -t top "+5s" Enter
jumped=$(shown_after "$back")
awk -v a="$start" -v b="$jumped" 'BEGIN { exit !(b - a > 4.99 && b - a < 6) }' ||
  fail "t +5s did not jump to 5 s after the start ($start -> $jumped)"
tmx send-keys -t top '>'
wait_for " 2x"
tmx send-keys -t top Space
sleep 2
awk -v a="$start" -v b="$(shown)" 'BEGIN { exit !(b - a > 7) }' ||
  fail "the replay did not play on at 2x ($start -> $(shown))"
tmx send-keys -t top End
wait_for " END"
tmx send-keys -t top q
wait_for "EXIT=0"
# neuron-top --record keeps what it was sent.
tmx send-keys -t top "clear; $top --socket $tmp/client.sock --record $tmp/top.nmrec; echo EXIT=\$?" Enter
wait_for "Utilization (Avg:"
sleep 2
tmx send-keys -t top q
wait_for "recorded "
wait_for "EXIT=0"
"$ls" --replay "$tmp/top.nmrec" | grep -q "trn1.32xlarge" || fail "neuron-top --record's file does not replay"
kill -TERM "${pids[-1]}"

# 5. SIGKILL mid-run: the archive still replays, with at most the last second lost.
start_daemon killed --device sim:trn1.2xlarge --speed 10 --record "$tmp/killed"
sleep 3
kill -KILL "${pids[-1]}"
"$monitor" --replay "$tmp/killed" -c "$tmp/monitor.json" >"$tmp/killed.json" 2>"$tmp/killed.log" ||
  fail "replaying a killed daemon's archive failed: $(cat "$tmp/killed.log")"
n=$(wc -l <"$tmp/killed.json")
[ "$n" -ge 2 ] || fail "only $n documents from 3 s of a killed daemon"
echo "record/replay ok"
