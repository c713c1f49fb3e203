// CommandLine: neuron-monitord's flags as a typed struct, how they are declared on the command
// line (AddDaemonOptions), and how a configuration is resolved from them — the config file (or
// the defaults), then each flag given, then every value rule (ResolveConfig). The actions that
// do not run the daemon (--print-default-config, --list-scenarios, --check-config) are here too,
// so main only parses and runs. Not thread-safe (parsing happens once in main).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "daemon/core/config/config.h"
#include "daemon/core/config/config_file.h"
#include "proto/common/simulator_options.h"
#include "proto/common/status.h"

namespace CLI {
class App;
}

namespace neuronmon::daemon {

// Command-line flags; each set one overrides the config file.
struct CommandLine {
  std::string config_path{kDefaultConfigPath};
  bool config_path_given = false;  // a missing default file is fine, a missing given one is not
  SimulatorOptions simulate;       // --device, --scenario, --seed, --speed, --period
  std::optional<std::string> socket, listen, metrics_listen, log_level;
  std::optional<std::string> sysfs_root, proc_root, neuron_monitor, datastore_root;
  std::optional<std::int64_t> node, nodes;
  std::optional<std::string> record;               // --record DIR|off
  std::optional<std::string> replay, replay_from;  // --replay PATH, --from TIME
};

// What neuron-monitord was asked to do.
struct Invocation {
  enum class Action { kRun, kCheckConfig, kPrintDefaultConfig, kListScenarios };
  Action action = Action::kRun;
  CommandLine cli;
};

// Declares every flag of neuron-monitord on `app`, parsed into `invocation`.
void AddDaemonOptions(CLI::App& app, Invocation& invocation);

// Runs the actions that do not start the daemon, writing to `out` and `err`: the default config,
// the built-in scenarios, or the check of the configuration. Returns the exit status; nullopt for
// kRun, whose configuration `config` then holds (problems are on `err`: status 1).
std::optional<int> RunAction(const Invocation& invocation, std::ostream& out, std::ostream& err,
                             std::optional<DaemonConfig>& config);

// Loads the config file (or the defaults when the default file is absent), applies the flags and
// validates the result. Every problem is appended to `problems` as "SOURCE: FIELD: what is wrong".
Result<DaemonConfig> ResolveConfig(const CommandLine& cli, std::vector<std::string>* problems);
// The flags part of ResolveConfig: `cli` applied to `config`, then validated, problems naming
// `source`.
Result<DaemonConfig> ApplyCommandLine(const CommandLine& cli, DaemonConfig config,
                                      const std::string& source,
                                      std::vector<std::string>* problems);

// Sets what `simulate` sets on `config` (a bad --period is a problem "command line: --period:
// ..." in `problems`). The daemon's flags and an in-process daemon's options go through here.
void ApplySimulatorOptions(const SimulatorOptions& simulate, DaemonConfig& config,
                           std::vector<std::string>* problems);

}  // namespace neuronmon::daemon
