#!/usr/bin/env bash
# Drives the real neuron-top in tmux as a person would: start it standalone, read the screen, switch
# tabs, toggle FLOPS, open the tree, resize, pause, show help, quit — and check the terminal is
# restored (the shell prompt and the alternate screen are back). Cleans up its tmux server.
# usage: neuron_top_tmux.sh <neuron-top binary>
set -euo pipefail
top=$1
sock="neuronmon-e2e-$$"
tmx() { tmux -L "$sock" "$@"; }
cleanup() { tmx kill-server 2>/dev/null || true; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; echo "--- screen ---"; tmx capture-pane -p -t e2e || true; exit 1; }
# Waits until the screen contains $1 (up to $2 seconds, default 15).
wait_for() {
  local i
  for ((i = 0; i < ${2:-15} * 10; i++)); do
    if tmx capture-pane -p -t e2e | grep -qF -- "$1"; then return 0; fi
    sleep 0.1
  done
  fail "screen never showed: $1"
}
screen() { tmx capture-pane -p -t e2e; }

export LANG=C.UTF-8 LC_ALL=C.UTF-8
tmx new-session -d -s e2e -x 140 -y 50 "bash --norc --noprofile"
tmx send-keys -t e2e "PS1='PROMPT> '; clear" Enter
wait_for "PROMPT>"
tmx send-keys -t e2e "$top --standalone --device sim:trn2.48xlarge --scenario straggler --speed 5; echo EXIT=\$?" Enter
wait_for "neuron-top"
wait_for "embedded simulator"
wait_for "NeuronCore v3d Utilization (Avg:"
wait_for "ND15"
wait_for ">[1]:all<"

# Tabs: 'd' moves to the next tab, '3' selects the third.
tmx send-keys -t e2e d
wait_for ">[2]:llama3-8b-rank0<"
tmx send-keys -t e2e 3
wait_for ">[3]:llama3-8b-rank1<"
tmx send-keys -t e2e 1
wait_for ">[1]:all<"

# FLOPS mode and back.
tmx send-keys -t e2e f
wait_for "TF | Total:"
tmx send-keys -t e2e f
wait_for "Utilization (Avg:"

# The memory tree: expand everything, then collapse.
tmx send-keys -t e2e x
wait_for "[-] ND 0"
wait_for "NC 0"
tmx send-keys -t e2e x
wait_for "[+] ND 0"

# Resize: the layout follows at once, and small sizes fold instead of failing.
tmx resize-window -t e2e -x 80 -y 24
wait_for "hidden (window too small)"
tmx resize-window -t e2e -x 40 -y 12
wait_for "neuron-top"
tmx resize-window -t e2e -x 140 -y 50
wait_for "ND15"

# Pause: a banner says so; Space resumes.
tmx send-keys -t e2e Space
wait_for "PAUSED"
tmx send-keys -t e2e Space
for ((i = 0; i < 50; i++)); do screen | grep -qF PAUSED || break; sleep 0.1; done
screen | grep -qF PAUSED && fail "still paused after Space"

# Help overlay lists the keys; any key closes it.
tmx send-keys -t e2e h
wait_for "neuron-top keys"
tmx send-keys -t e2e z
for ((i = 0; i < 50; i++)); do screen | grep -qF "neuron-top keys" || break; sleep 0.1; done

# Quit: the terminal is back to the shell, and neuron-top exited with 0.
tmx send-keys -t e2e q
wait_for "EXIT=0"
screen | grep -qF "NeuronCore v3d Utilization" && fail "the neuron-top screen is still shown after quit"
tmx send-keys -t e2e "echo still-alive" Enter
wait_for "still-alive"

# NO_COLOR: no colour escapes in the pane (attributes only).
tmx send-keys -t e2e "clear; NO_COLOR=1 $top --standalone --device sim:trn1.2xlarge" Enter
wait_for "NeuronCore v2 Utilization"
if tmx capture-pane -e -p -t e2e | grep -qE $'\e\\[[0-9;]*3[0-7]m|38;5;'; then fail "colour escapes with NO_COLOR"; fi
# Ctrl-C quits as cleanly as q.
tmx send-keys -t e2e C-c
wait_for "PROMPT>"
echo "neuron-top e2e: ok"
