// neuron-monitord: parse flags, resolve the configuration, run the daemon.
#include <CLI/CLI.hpp>
#include <csignal>
#include <iostream>

#include "daemon/server/daemon.h"
#include "proto/wire/protobuf_logs.h"
#include "simdev/scenario_library.h"

int main(int argc, char** argv) {
  using namespace neuronmon::daemon;
  CommandLine cli;
  bool check = false, print_default = false, list = false;
  CLI::App app{
      "neuron-monitord: samples a Trainium device (or its simulation) and streams metrics"};
  app.set_version_flag("--version", std::string("neuron-monitord ") + NEURONMON_VERSION);
  app.add_option("--config", cli.config_path, "config file (JSON, comments allowed)")
      ->capture_default_str()
      ->each([&](const std::string&) { cli.config_path_given = true; });
  app.add_option("--device", cli.simulate.device,
                 "device: auto (default: real Neuron devices if present, else the simulator), "
                 "neuron, or sim:<preset>[:lnc=N]");
  app.add_option("--sysfs-root", cli.sysfs_root, "where sysfs is mounted (default /sys)");
  app.add_option("--proc-root", cli.proc_root, "where procfs is mounted (default /proc)");
  app.add_option("--neuron-monitor", cli.neuron_monitor,
                 "AWS's neuron-monitor for per-application figures ('' for none)");
  app.add_option("--scenario", cli.simulate.scenario,
                 "simulated scenario: a built-in name or a .json file");
  app.add_option("--seed", cli.simulate.seed, "simulation seed");
  app.add_option("--node", cli.node,
                 "simulate node K (from 0) of a cluster job; every node runs the same scenario "
                 "and seed");
  app.add_option("--nodes", cli.nodes,
                 "the simulated cluster's node count (default: the scenario's)");
  app.add_option("--period", cli.simulate.period,
                 "base sampling period, e.g. 1s or 250ms (minimum 10ms)");
  app.add_option("--speed", cli.simulate.speed,
                 "run the simulated clock (or a --replay) FACTOR times faster than real time");
  app.add_option("--record", cli.record,
                 "keep the archive in DIR (default: the config's recorder.directory), or 'off' (no "
                 "archive and no incident bundles)");
  app.add_option("--replay", cli.replay,
                 "serve a recording (a file, or an archive directory) as if it were live");
  app.add_option("--from", cli.replay_from,
                 "with --replay: start at TIME (2026-12-04T21:30:00Z, 21:30, or +10m from the "
                 "start)");
  app.add_option("--socket", cli.socket, "unix socket path");
  app.add_option("--listen", cli.listen, "also serve the stream on TCP HOST:PORT");
  app.add_option("--metrics-listen", cli.metrics_listen,
                 "Prometheus /metrics on HOST:PORT ('off': none)");
  app.add_option("--log-level", cli.log_level, "error, warn, info or debug");
  app.add_flag("--check-config", check, "validate the configuration and exit");
  app.add_flag("--print-default-config", print_default, "print the default config file and exit");
  app.add_flag("--list-scenarios", list, "list the built-in simulated scenarios and exit");
  CLI11_PARSE(app, argc, argv);

  if (print_default) return std::cout << DefaultConfigText(), 0;
  if (list) {
    for (const auto& s : neuronmon::simdev::BuiltinScenarios()) {
      auto parsed = neuronmon::simdev::LoadScenario(s.name);
      std::cout << s.name << "\t" << (parsed.ok() ? parsed->description : "") << "\n";
    }
    return 0;
  }
  std::vector<std::string> problems;
  auto config = ResolveConfig(cli, &problems);
  if (!config.ok()) {
    for (const auto& p : problems) std::cerr << p << "\n";
    if (problems.empty()) std::cerr << config.status().message() << "\n";
    return 1;
  }
  if (check) return std::cout << cli.config_path << ": configuration is valid\n", 0;

  std::signal(SIGPIPE, SIG_IGN);
  neuronmon::wire::SilenceProtobufParseLogs();
  Logger log;
  asio::io_context io;
  Daemon daemon(io, cli, std::move(*config), log, DaemonMode{});
  if (auto started = daemon.Start(); !started.ok()) {
    log.Error(started.message());
    return 1;
  }
  // The last resort: every handler catches what it can throw; should one not, log it and go on
  // serving rather than std::terminate.
  for (;;) {
    try {
      io.run();
      return 0;
    } catch (const std::exception& e) {
      log.Error(std::string("internal error: ") + e.what());
    }
  }
}
