// neuron-monitord: parse flags, run what they ask (daemon/server/command_line.h, daemon.h).
#include <malloc.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "daemon/server/command_line.h"
#include "daemon/server/daemon.h"

int main(int argc, char** argv) {
  using namespace neuronmon::daemon;
  // No fastbins: each sample builds and frees many small messages between larger buffers, and
  // glibc consolidates every fastbin at each large free; without them (tcache still serves the
  // small sizes) the daemon costs ~15% less CPU (bench/README.md, "The allocator").
  ::mallopt(M_MXFAST, 0);
  Invocation invocation;
  CLI::App app{
      "neuron-monitord: samples a Trainium device (or its simulation) and streams metrics"};
  AddDaemonOptions(app, invocation);
  CLI11_PARSE(app, argc, argv);
  std::optional<DaemonConfig> config;
  if (std::optional<int> done = RunAction(invocation, std::cout, std::cerr, config)) return *done;
  return RunDaemon(invocation.cli, std::move(*config));
}
