#include "daemon/server/command_line.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <ostream>
#include <utility>

#include "daemon/server/tls_context.h"
#include "proto/common/duration.h"
#include "simdev/scenario_library.h"

namespace neuronmon::daemon {
namespace {

// Under systemd, the unit passes the token as the credential "token" (LoadCredential=): with no
// auth_token_file configured, that is the file to read.
void UseCredentialToken(DaemonConfig& config) {
  if (!config.auth_token_file.empty()) return;
  const char* dir = std::getenv("CREDENTIALS_DIRECTORY");
  if (dir == nullptr || *dir == '\0') return;
  const std::string path = std::string(dir) + "/token";
  if (::access(path.c_str(), F_OK) == 0) config.auth_token_file = path;
}

void ApplyFlags(const CommandLine& cli, DaemonConfig& config, std::vector<std::string>* problems) {
  auto problem = [&](const std::string& flag, const std::string& what) {
    problems->push_back("command line: " + flag + ": " + what);
  };
  ApplySimulatorOptions(cli.simulate, config, problems);
  BackendOptions& b = config.backend;
  if (cli.sysfs_root) b.host.sysfs_root = *cli.sysfs_root;
  if (cli.proc_root) b.host.proc_root = *cli.proc_root;
  if (cli.neuron_monitor) b.host.neuron_monitor = *cli.neuron_monitor;
  if (cli.datastore_root) b.host.datastore_root = *cli.datastore_root;
  if (cli.node) b.node = *cli.node;
  if (cli.nodes) b.nodes = *cli.nodes;
  if (cli.replay) b.replay = *cli.replay;
  if (cli.replay_from) b.replay_from = *cli.replay_from;
  if (cli.record) {
    // "off" keeps nothing on disk: no archive, no incident bundles.
    config.recorder.enabled = *cli.record != "off";
    if (config.recorder.enabled) config.recorder.options.directory = *cli.record;
    if (*cli.record == "off") config.incidents.enabled = false;
  }
  if (cli.socket) config.listeners.unix_socket.options.path = *cli.socket;
  if (cli.listen) {
    Result<ListenAddress> a = ParseListenAddress(*cli.listen);
    a.ok() ? void(config.listeners.tcp = *a) : problem("--listen", a.status().message());
  }
  if (cli.metrics_listen) {
    if (cli.metrics_listen->empty() || *cli.metrics_listen == "off") {
      config.listeners.metrics.reset();
    } else {
      Result<ListenAddress> a = ParseListenAddress(*cli.metrics_listen);
      a.ok() ? void(config.listeners.metrics = *a)
             : problem("--metrics-listen", a.status().message());
    }
  }
  if (cli.log_level) {
    Result<LogLevel> l = ParseLogLevel(*cli.log_level);
    l.ok() ? void(config.log_level = *l) : problem("--log-level", l.status().message());
  }
}

void AddSourceOptions(CLI::App& app, CommandLine& cli) {
  app.add_option("--device", cli.simulate.device,
                 "device: auto (default: real Neuron devices if present, else the simulator), "
                 "neuron, or sim:<preset>[:lnc=N]");
  app.add_option("--sysfs-root", cli.sysfs_root, "where sysfs is mounted (default /sys)");
  app.add_option("--proc-root", cli.proc_root, "where procfs is mounted (default /proc)");
  app.add_option("--neuron-monitor", cli.neuron_monitor,
                 "AWS's neuron-monitor for per-application figures ('' for none)");
  app.add_option("--datastore-root", cli.datastore_root,
                 "read the runtimes' datastores from image files DIR/neuron<N>/<pid>");
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
}

void AddArchiveOptions(CLI::App& app, CommandLine& cli) {
  app.add_option("--record", cli.record,
                 "keep the archive in DIR (default: the config's recorder.directory), or 'off' (no "
                 "archive and no incident bundles)");
  app.add_option("--replay", cli.replay,
                 "serve a recording (a file, or an archive directory) as if it were live");
  app.add_option("--from", cli.replay_from,
                 "with --replay: start at TIME (2026-12-04T21:30:00Z, 21:30, or +10m from the "
                 "start)");
}

void AddListenerOptions(CLI::App& app, CommandLine& cli) {
  app.add_option("--socket", cli.socket, "unix socket path");
  app.add_option("--listen", cli.listen, "also serve the stream on TCP HOST:PORT");
  app.add_option("--metrics-listen", cli.metrics_listen,
                 "Prometheus /metrics on HOST:PORT ('off': none)");
  app.add_option("--log-level", cli.log_level, "error, warn, info or debug");
}

int ListScenarios(std::ostream& out) {
  for (const auto& s : simdev::BuiltinScenarios()) {
    auto parsed = simdev::LoadScenario(s.name);
    out << s.name << "\t" << (parsed.ok() ? parsed->description : "") << "\n";
  }
  return 0;
}

}  // namespace

void AddDaemonOptions(CLI::App& app, Invocation& invocation) {
  CommandLine& cli = invocation.cli;
  app.set_version_flag("--version", std::string("neuron-monitord ") + NEURONMON_VERSION);
  app.add_option("--config", cli.config_path, "config file (JSON, comments allowed)")
      ->capture_default_str()
      ->each([&cli](const std::string&) { cli.config_path_given = true; });
  AddSourceOptions(app, cli);
  AddArchiveOptions(app, cli);
  AddListenerOptions(app, cli);
  using Action = Invocation::Action;
  const auto action = [&invocation](Action a) {
    return [&invocation, a](std::int64_t) { invocation.action = a; };
  };
  app.add_flag_function("--check-config", action(Action::kCheckConfig),
                        "validate the configuration and exit");
  app.add_flag_function("--print-default-config", action(Action::kPrintDefaultConfig),
                        "print the default config file and exit");
  app.add_flag_function("--list-scenarios", action(Action::kListScenarios),
                        "list the built-in simulated scenarios and exit");
}

std::optional<int> RunAction(const Invocation& invocation, std::ostream& out, std::ostream& err,
                             std::optional<DaemonConfig>& config) {
  using Action = Invocation::Action;
  if (invocation.action == Action::kPrintDefaultConfig) return out << DefaultConfigText(), 0;
  if (invocation.action == Action::kListScenarios) return ListScenarios(out);
  std::vector<std::string> problems;
  Result<DaemonConfig> resolved = ResolveConfig(invocation.cli, &problems);
  if (!resolved.ok()) {
    for (const std::string& p : problems) err << p << "\n";
    if (problems.empty()) err << resolved.status().message() << "\n";
    return 1;
  }
  if (invocation.action == Action::kCheckConfig) {
    // The TLS files too: they exist, parse, and the keys match the certificates.
    if (Result<ListenerTls> tls = MakeListenerTls(*resolved); !tls.ok()) {
      return err << invocation.cli.config_path << ": " << tls.status().message() << "\n", 1;
    }
    return out << invocation.cli.config_path << ": configuration is valid\n", 0;
  }
  config = std::move(*resolved);
  return std::nullopt;
}

void ApplySimulatorOptions(const SimulatorOptions& simulate, DaemonConfig& config,
                           std::vector<std::string>* problems) {
  BackendOptions& b = config.backend;
  if (simulate.device) b.device = *simulate.device;
  if (simulate.scenario) b.scenario = *simulate.scenario;
  if (simulate.seed) b.seed = *simulate.seed;
  if (simulate.speed) b.speed = *simulate.speed;
  if (simulate.sysfs_root) b.host.sysfs_root = *simulate.sysfs_root;
  if (simulate.proc_root) b.host.proc_root = *simulate.proc_root;
  if (simulate.driver_only) {
    b.host.driver_datastores = false;
    b.host.datastore_root.clear();
    b.host.neuron_monitor.clear();
    b.host.kernel_log = false;
    b.host.kubernetes = false;
  }
  if (simulate.period) {
    Result<Nanos> p = ParseDuration(*simulate.period);
    if (p.ok()) {
      config.period = *p;
    } else {
      problems->push_back("command line: --period: " + p.status().message());
    }
  }
}

Result<DaemonConfig> ApplyCommandLine(const CommandLine& cli, DaemonConfig config,
                                      const std::string& source,
                                      std::vector<std::string>* problems) {
  const std::size_t before = problems->size();
  ApplyFlags(cli, config, problems);
  UseCredentialToken(config);
  Status valid = ValidateConfig(config, problems, source);
  if (problems->size() > before) return Status::InvalidArgument((*problems)[before]);
  if (!valid.ok()) return valid;
  return config;
}

Result<DaemonConfig> ResolveConfig(const CommandLine& cli, std::vector<std::string>* problems) {
  DaemonConfig config = DefaultConfig();
  std::vector<std::string> file_problems;
  Result<DaemonConfig> loaded = LoadConfigFile(cli.config_path, &file_problems);
  if (loaded.ok()) {
    config = std::move(*loaded);
  } else if (cli.config_path_given || loaded.status().code() != StatusCode::kNotFound) {
    problems->insert(problems->end(), file_problems.begin(), file_problems.end());
    return loaded.status();
  }
  return ApplyCommandLine(cli, std::move(config), cli.config_path, problems);
}

}  // namespace neuronmon::daemon
