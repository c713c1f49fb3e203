// neuron-monitor: AWS neuron-monitor-compatible JSON lines from neuron-monitord.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <iostream>

#include "client/embedded_simulator.h"
#include "client/endpoint_flags.h"
#include "client/program_flags.h"
#include "client/replay_flags.h"
#include "exporter/monitor_app.h"
#include "proto/wire/protobuf_logs.h"

int main(int argc, char** argv) {
  using namespace neuronmon;
  std::string config_file;
  client::EndpointFlags endpoint;
  exporter::MonitorAppOptions options;
  bool aws_only = false;
  CLI::App app{
      "neuron-monitor: prints a neuron-monitor JSON document per line (from neuron-monitord)"};
  client::AddVersionFlag(app, "neuron-monitor");
  app.add_option("-c,--config-file", config_file, "neuron-monitor JSON configuration file");
  app.add_option("--verbose", options.verbose, "0-4: progress on stderr")->check(CLI::Range(0, 4));
  app.add_option("--count", options.count, "exit after N documents");
  app.add_flag("--aws-only", aws_only, "print only AWS neuron-monitor's own groups and keys");
  client::ReplayFlags replay;
  client::AddReplayOptions(app, replay,
                           {"print the documents of a recording (an archive directory or a "
                            "--record file) instead of connecting",
                            "with --replay: start at TIME (2026-12-04T21:30:00Z, 21:30 (UTC), or "
                            "+10m from the recording's start)",
                            "with --replay: stop after TIME (same forms)"});
  client::AddRecordOption(app, options.record);
  client::AddEndpointOptions(app, endpoint);
  CLI11_PARSE(app, argc, argv);
  if (Status st = client::CheckReplayOptions(replay); !st.ok()) {
    return std::cerr << "neuron-monitor: " << st.message() << "\n", 2;
  }
  // A daemon can send frames libprotobuf complains about; our decoder already says so, once.
  neuronmon::wire::SilenceProtobufParseLogs();

  options.extensions = !aws_only;
  options.config = exporter::DefaultMonitorConfig();
  if (!config_file.empty()) {
    auto config = exporter::LoadMonitorConfig(config_file);
    if (!config.ok())
      return std::cerr << "neuron-monitor: " << config.status().message() << "\n", 1;
    options.config = std::move(*config);
  }
  if (replay.given()) {
    if (!options.record.empty()) {
      return std::cerr << "neuron-monitor: --record and --replay cannot be used together\n", 2;
    }
    options.replay = replay.request;
    options.open_replay = client::EmbeddedReplay();
    std::signal(SIGPIPE, SIG_IGN);
    return exporter::RunMonitor(std::move(options), STDOUT_FILENO, STDERR_FILENO);
  }
  auto ep = client::ResolveEndpoint(endpoint, &options.token);
  if (!ep.ok()) return std::cerr << "neuron-monitor: " << ep.status().message() << "\n", 1;
  options.endpoint = std::move(*ep);
  options.endpoint.start_local = client::EmbeddedSimulator();
  std::signal(SIGPIPE, SIG_IGN);
  return exporter::RunMonitor(std::move(options), STDOUT_FILENO, STDERR_FILENO);
}
