// neuron-top: the live terminal view of neuron-monitord's stream.
#include <CLI/CLI.hpp>
#include <clocale>
#include <cstdlib>
#include <iostream>

#include "client/cluster.h"
#include "client/embedded_simulator.h"
#include "client/endpoint_flags.h"
#include "client/program_flags.h"
#include "client/replay_flags.h"
#include "proto/common/file_reader.h"
#include "proto/wire/protobuf_logs.h"
#include "tui/app.h"
#include "tui/format.h"

int main(int argc, char** argv) {
  using namespace neuronmon;
  std::setlocale(LC_ALL, "");
  tui::AppOptions options;
  client::EndpointFlags endpoint;
  bool no_color = false;
  std::optional<std::string> hosts_file;
  CLI::App app{"neuron-top: live NeuronCore, HBM, collective and memory view, with a diagnosis"};
  client::AddVersionFlag(app, "neuron-top");
  client::AddEndpointOptions(app, endpoint);
  app.add_option("--hosts", hosts_file,
                 "cluster view: follow every HOST:PORT listed in FILE (one per line, # comments); "
                 "--connect also takes a comma-separated list");
  app.add_option("--delay", options.delay_seconds, "refresh interval in seconds")
      ->check(CLI::Number)
      ->check(CLI::Range(0.1, 3600.0));
  app.add_flag("--no-color", no_color, "no colours (also when NO_COLOR is set)");
  app.add_flag("--ascii", options.ascii, "plain ASCII glyphs");
  app.add_flag("--once", options.once,
               "print one plain-text frame and exit (width: $COLUMNS or 120)");
  client::ReplayFlags replay;
  client::AddReplayOptions(
      app, replay,
      {"show a recording (an archive directory or a --record file) instead of a daemon; "
       "--speed sets its pace",
       "with --replay: start at TIME (2026-12-04T21:30:00Z, 21:30 (UTC), or +10m from the "
       "recording's start)",
       ""});
  client::AddRecordOption(app, options.record);
  CLI11_PARSE(app, argc, argv);
  if (!options.record.empty() &&
      (replay.given() || hosts_file ||
       (endpoint.connect && endpoint.connect->find(',') != std::string::npos))) {
    return std::cerr << "neuron-top: --record keeps one daemon's stream: not with --replay or a "
                        "cluster view\n",
           2;
  }
  if (Status st = client::CheckReplayOptions(replay, &endpoint, hosts_file.has_value()); !st.ok()) {
    return std::cerr << "neuron-top: " << st.message() << "\n", 2;
  }
  // A daemon can send frames libprotobuf complains about; our decoder already says so, once.
  neuronmon::wire::SilenceProtobufParseLogs();

  const char* no_color_env = std::getenv("NO_COLOR");
  options.color = !no_color && (no_color_env == nullptr || *no_color_env == '\0');
  options.once_width = neuronmon::tui::DimensionFromEnv(std::getenv("COLUMNS"), 120, 20, 1000);
  if (options.once)
    options.once_height = neuronmon::tui::DimensionFromEnv(std::getenv("LINES"), 0, 6, 1000);
  if (replay.given()) {
    options.replay = replay.request;
    options.open_replay = client::EmbeddedReplay();
    if (endpoint.speed) options.replay_speed = *endpoint.speed;
    return tui::RunTop(options);
  }
  // Cluster mode: several hosts, each checked as --connect checks one.
  constexpr std::size_t kMaxHosts = 4096;
  if (hosts_file || (endpoint.connect && endpoint.connect->find(',') != std::string::npos)) {
    if (endpoint.socket || endpoint.standalone)
      return std::cerr << "neuron-top: a cluster view follows TCP daemons only\n", 1;
    Result<std::vector<std::string>> hosts = Status::InvalidArgument("");
    if (hosts_file) {
      if (endpoint.connect)
        return std::cerr << "neuron-top: --hosts and --connect cannot be used together\n", 1;
      Result<std::string> text = ReadRegularFile(*hosts_file, 1 << 20);
      if (!text.ok()) return std::cerr << "neuron-top: " << text.status().message() << "\n", 1;
      hosts = client::ParseHostsFile(*text, *hosts_file, kMaxHosts);
    } else {
      hosts = client::SplitHostList(*endpoint.connect, kMaxHosts);
    }
    if (!hosts.ok()) return std::cerr << "neuron-top: " << hosts.status().message() << "\n", 1;
    endpoint.connect = hosts->front();  // validates the other flags and reads --token-file
    options.hosts = std::move(*hosts);
  }
  auto ep = client::ResolveEndpoint(endpoint, &options.token);
  if (!ep.ok()) return std::cerr << "neuron-top: " << ep.status().message() << "\n", 1;
  options.endpoint = std::move(*ep);
  options.endpoint.start_local = client::EmbeddedSimulator();
  return tui::RunTop(options);
}
