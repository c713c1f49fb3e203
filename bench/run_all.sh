#!/usr/bin/env bash
# Runs every benchmark of a Release build directory (make bench). Figures: bench/README.md.
set -euo pipefail
build=${1:-build/release}
for b in simdev_bench neurondev_bench history_bench json_bench tui_bench metrics_bench recorder_bench; do
  [ -x "$build/bench/$b" ] && "$build/bench/$b"
done
"$build/bench/daemon_load" --daemon "$build/daemon/neuron-monitord" --clients 1000 --period 100ms --duration 20s
"$build/bench/daemon_load" --daemon "$build/daemon/neuron-monitord" --clients 1 --period 1s --duration 620s
"$(dirname "$0")/tui_tmux_cpu.sh" "$build/tui/neuron-top" 60
"$(dirname "$0")/cluster_top.sh" "$build" follow 256 60
