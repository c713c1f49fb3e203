#!/usr/bin/env bash
# Incident bundles as users meet them: a simulated input-bound job makes neuron-monitord declare an
# incident once the verdict has held; the bundle is one file in incidents/, logged, counted on
# /metrics and announced to subscribers (neuron-monitor on stderr, neuron-top on its status line);
# neuron-ls --incidents lists it, shows it in full and as JSON; neuron-monitor --replay and
# neuron-top --replay play it. One bundle per verdict episode. Temp directory only; every process
# is stopped.
# usage: incidents.sh <neuron-monitord> <neuron-monitor> <neuron-ls> <neuron-top>
set -euo pipefail
daemon=$1 monitor=$2 ls=$3 top=$4
tmp=$(mktemp -d)
pids=()
sock="neuronmon-incidents-$$"
tmx() { tmux -L "$sock" "$@"; }
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  if command -v tmux >/dev/null; then tmx kill-server 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; tail -20 "$tmp"/*.log 2>/dev/null; exit 1; }

# Ten minutes of 100 ms snapshots of a trn1.32xlarge exceed the default history budget; two do not.
cat >"$tmp/daemon.json" <<JSON
{"history_retention": "2m",
 "incidents": {"directory": "$tmp/incidents", "hold": "2s", "hold_errors": "1s",
               "before": "5s", "after": "2s"}}
JSON

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$daemon" --config "$tmp/daemon.json" --socket "$tmp/d.sock" --metrics-listen "127.0.0.1:$port" --period 100ms --device sim:trn1.32xlarge --scenario input-bound --speed 10 --record "$tmp/archive" \
  >"$tmp/daemon.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -S "$tmp/d.sock" ] && break; sleep 0.1; done
[ -S "$tmp/d.sock" ] || fail "the daemon never listened"
url=$(grep -oE 'http://127\.0\.0\.1:[0-9]+' "$tmp/daemon.log" | head -1)
[ -n "$url" ] || fail "no /metrics address in the log"

# A subscriber hears of the incident on stderr, without -v.
"$monitor" --socket "$tmp/d.sock" >"$tmp/monitor.json" 2>"$tmp/monitor.log" &
pids+=($!)
if command -v tmux >/dev/null; then
  export LANG=C.UTF-8 LC_ALL=C.UTF-8
  tmx new-session -d -s top -x 160 -y 45 "$top --socket $tmp/d.sock"
fi
for _ in $(seq 300); do grep -q "incident saved" "$tmp/monitor.log" && break; sleep 0.1; done
grep -q "^neuron-monitor: incident saved: $tmp/incidents/.*-input_bound.nmrec (input_bound for 2s on " \
  "$tmp/monitor.log" || fail "neuron-monitor was not told: $(cat "$tmp/monitor.log")"
bundle=$(ls "$tmp"/incidents/*.nmrec)
[ "$(echo "$bundle" | wc -l)" -eq 1 ] || fail "expected one bundle: $bundle"
grep -q "incident saved: $bundle" "$tmp/daemon.log" || fail "the daemon did not log the path"
metrics=$(curl -sf --max-time 10 "$url/metrics") || fail "no /metrics from $url"
# (grep -q on a here-string: a pipe would fail under pipefail when grep stops reading early)
grep -qx 'neuron_monitord_incidents_total 1' <<<"$metrics" ||
  fail "/metrics does not count the incident: $(echo "$metrics" | grep incident)"
if command -v tmux >/dev/null; then
  for _ in $(seq 50); do
    screen=$(tmx capture-pane -p -t top)
    grep -qF "incident saved: $tmp/incidents/" <<<"$screen" && break
    sleep 0.1
  done
  grep -qF "incident saved: $tmp/incidents/" <<<"$screen" ||
    { echo "$screen"; fail "neuron-top does not show the incident"; }
  tmx send-keys -t top q
fi

# The verdict goes on: still one bundle for this episode.
sleep 4
[ "$(ls "$tmp"/incidents/*.nmrec | wc -l)" -eq 1 ] || fail "a second bundle for one episode"

# neuron-ls --incidents: the table, the bundle in full, JSON.
"$ls" --incidents "$tmp/incidents" >"$tmp/table.txt" || fail "neuron-ls --incidents failed"
head -1 "$tmp/table.txt" | grep -q '^TIME (UTC) *VERDICT *HELD *RUNTIME' || fail "no table header"
grep -q "input_bound .*vit-huge-rank.*$bundle" "$tmp/table.txt" ||
  fail "the table does not list the bundle: $(cat "$tmp/table.txt")"
"$ls" --incidents "$bundle" >"$tmp/full.txt" || fail "neuron-ls --incidents FILE failed"
for want in "verdict:  input_bound on vit-huge-rank" "findings when declared:" \
  "evidence: utilization_percent = " "configuration:" "\"hold\": \"2s\"" \
  "replay:   neuron-top --replay $bundle"; do
  grep -qF -- "$want" "$tmp/full.txt" || fail "the full view lacks '$want': $(head -30 "$tmp/full.txt")"
done
"$ls" --incidents "$tmp/incidents" -j | python3 -c '
import json, sys
[b] = json.load(sys.stdin)
i = b["incident"]
assert i["kind"] == "FINDING_KIND_INPUT_BOUND", i["kind"]
assert int(i["window_end_unix_ns"]) - int(i["declared_unix_ns"]) >= 2e9
assert b["config"]["incidents"]["after"] == "2s"
assert any(e["name"] == "utilization_percent" for f in i["findings"] for e in f.get("evidence", []))
' || fail "neuron-ls --incidents -j"

# The bundle replays: documents, and the incident said once on stderr.
"$monitor" --replay "$bundle" >"$tmp/replay.json" 2>"$tmp/replay.log" ||
  fail "neuron-monitor --replay of the bundle failed: $(cat "$tmp/replay.log")"
[ -s "$tmp/replay.json" ] || fail "the bundle replays no documents"
grep -q "^neuron-monitor: incident: input_bound for 2s on vit-huge-rank" "$tmp/replay.log" ||
  fail "the replay does not say why the bundle was saved: $(cat "$tmp/replay.log")"

kill -TERM "${pids[1]}"
wait "${pids[1]}" 2>/dev/null || true
kill -TERM "${pids[0]}"
wait "${pids[0]}" || fail "the daemon did not stop cleanly"
echo "ok: one bundle $(basename "$bundle"), listed, shown, replayed"
