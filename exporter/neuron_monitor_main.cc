// neuron-monitor: AWS neuron-monitor-compatible JSON lines from neuron-monitord.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <iostream>
#include <variant>

#include "client/embedded_simulator.h"
#include "exporter/monitor_app.h"
#include "exporter/monitor_options.h"
#include "proto/wire/protobuf_logs.h"

int main(int argc, char** argv) {
  using namespace neuronmon;
  exporter::MonitorCommandLine command_line;
  CLI::App app{
      "neuron-monitor: prints a neuron-monitor JSON document per line (from neuron-monitord)"};
  exporter::AddMonitorOptions(app, command_line);
  CLI11_PARSE(app, argc, argv);
  // A daemon can send frames libprotobuf complains about; our decoder already says so, once.
  wire::SilenceProtobufParseLogs();

  client::OptionsOr<exporter::MonitorAppOptions> resolved =
      exporter::ResolveMonitorOptions(command_line);
  if (const auto* refused = std::get_if<client::CommandLineError>(&resolved)) {
    return client::Refuse("neuron-monitor", *refused, std::cerr);
  }
  exporter::MonitorAppOptions& options = std::get<exporter::MonitorAppOptions>(resolved);
  if (options.replay) {
    options.open_replay = client::EmbeddedReplay();
  } else {
    options.endpoint.start_local = client::EmbeddedSimulator();
  }
  std::signal(SIGPIPE, SIG_IGN);
  return exporter::RunMonitor(std::move(options), STDOUT_FILENO, STDERR_FILENO);
}
