#!/usr/bin/env bash
# Drives neuron-top's Processes view in tmux as a person would, on the simulated `mixed` scenario
# (a Slurm training job and a Kubernetes inference pod, six processes each): open it, read the
# columns and rows, pick a sort column and reverse it, filter, group by job, press `k` on a
# simulated pid and read the refusal (nothing is signalled), leave, quit. Polls the pane; always
# removes its tmux server.
# usage: neuron_top_processes.sh <neuron-top binary>
set -euo pipefail
top=$1
sock="neuronmon-procs-$$"
tmx() { tmux -L "$sock" "$@"; }
cleanup() { tmx kill-server 2>/dev/null || true; }
trap cleanup EXIT
screen() { tmx capture-pane -p -t e2e; }
fail() { echo "FAIL: $*"; echo "--- screen ---"; screen || true; exit 1; }
# Waits until the screen contains $1 (up to $2 seconds, default 15).
wait_for() {
  local i
  for ((i = 0; i < ${2:-15} * 10; i++)); do
    if screen | grep -qF -- "$1"; then return 0; fi
    sleep 0.1
  done
  fail "screen never showed: $1"
}
# Waits until the screen no longer contains $1.
wait_gone() {
  local i
  for ((i = 0; i < ${2:-15} * 10; i++)); do
    if ! screen | grep -qF -- "$1"; then return 0; fi
    sleep 0.1
  done
  fail "screen still shows: $1"
}
# Waits until the first screen line containing $1 also contains each of $2...
wait_row() {
  local key=$1 i cell row ok
  shift
  for ((i = 0; i < 300; i++)); do
    row=$(screen | grep -F -- "$key" | head -1)
    ok=1
    for cell in "$@"; do grep -qF -- "$cell" <<<"$row" || ok=0; done
    [ $ok -eq 1 ] && return 0
    sleep 0.1
  done
  fail "the row of $key never showed all of: $*"
}
# The number of the first screen line containing $1 (fails when none does).
line_of() {
  local n
  n=$(screen | grep -nF -- "$1" | head -1 | cut -d: -f1)
  [ -n "$n" ] || fail "no line with: $1"
  echo "$n"
}

export LANG=C.UTF-8 LC_ALL=C.UTF-8
tmx new-session -d -s e2e -x 170 -y 45 "bash --norc --noprofile"
tmx send-keys -t e2e "PS1='PROMPT> '; clear" Enter
wait_for "PROMPT>"
tmx send-keys -t e2e "$top --standalone --device sim:trn2.48xlarge --scenario mixed --speed 5; echo EXIT=\$?" Enter
wait_for "embedded simulator"
wait_for "p: processes"

# p opens the view: every column, and the rows of both jobs.
tmx send-keys -t e2e p
wait_for "Processes: 12 Neuron applications, by UTIL (descending)" 30
for column in PID USER JOB DEVICES CORES "DEVICE MEM" "HOST MEM" "UTIL▼" VERDICT COMMAND; do
  screen | grep -F "COMMAND" | grep -qF -- "$column" || fail "no column $column"
done
wait_for "torchrun --nproc-per-node 6"
wait_for "inference/vllm-llam…"
# Each row has its user, job, devices and cores, memory (once the model has loaded) and util.
wait_row " 41200 " mlteam " 4242 " " 0-3 " GB % "torchrun --nproc-per-node 6"
wait_row " 88100 " serving "inference/vllm-llam…" " 24-27 " GB % "python3 -m vllm"
wait_for "12 of 12 shown"

# Sort: the picker (s) from UTIL down to PID (VERDICT, COMMAND, then PID), Enter; r reverses.
tmx send-keys -t e2e s
wait_for "Sort by (Enter, Esc)"
tmx send-keys -t e2e Down Down Down Enter
wait_for "by PID (descending)"
[ "$(line_of 88100)" -lt "$(line_of 41200)" ] || fail "PID descending: 88100 not above 41200"
tmx send-keys -t e2e r
wait_for "by PID (ascending)"
[ "$(line_of 41200)" -lt "$(line_of 88100)" ] || fail "PID ascending: 41200 not above 88100"

# Filter: / then text (q is typed, not a quit), Enter keeps it; Esc clears it.
tmx send-keys -t e2e / q BSpace v l l m
wait_for "Filter: vllm_"
tmx send-keys -t e2e Enter
wait_for "6 of 12 shown (filter \"vllm\""
screen | grep -qF torchrun && fail "the filter kept the training processes"
tmx send-keys -t e2e Escape
wait_for "12 of 12 shown"

# Group by job, with a totals line per group.
tmx send-keys -t e2e e
wait_for "job 4242 (6 processes)"
wait_for "job inference/vllm-llama2-7b-0 (6 processes)"
[ "$(line_of "job 4242")" -lt "$(line_of torchrun)" ] || fail "group line not above its processes"

# k on a simulated pid: refused on the screen, no confirmation, nothing signalled.
tmx send-keys -t e2e k
wait_for "is simulated, not a process on this host"
screen | grep -qF "Send SIGTERM" && fail "a confirmation for a simulated pid"
tmx send-keys -t e2e y
sleep 0.3
screen | grep -qF "Processes: 12" || fail "y outside a confirmation left the view"

# Help names the view's keys; p leaves the view.
tmx send-keys -t e2e h
wait_for "Processes view (p)"
tmx send-keys -t e2e z
wait_gone "Processes view (p)"
tmx send-keys -t e2e p
wait_for "NeuronCore v3d Utilization"

tmx send-keys -t e2e q
wait_for "EXIT=0"
tmx send-keys -t e2e "echo still-alive" Enter
wait_for "still-alive"
echo "neuron-top processes e2e: ok"
