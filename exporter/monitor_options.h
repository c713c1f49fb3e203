// MonitorCommandLine: neuron-monitor's flags as parsed, declared by AddMonitorOptions in --help's
// order, and ResolveMonitorOptions, which turns them into the MonitorAppOptions RunMonitor runs —
// the AWS configuration file read, a daemon's endpoint or a recording — or refuses the command
// line with the message and exit status neuron-monitor gives. The caller wires the in-process
// pieces (MonitorAppOptions::open_replay, Endpoint::start_local). Functions only; not
// thread-safe (parsing happens once in main).
#pragma once

#include <string>

#include "client/endpoint_flags.h"
#include "client/program_flags.h"
#include "client/replay_flags.h"
#include "exporter/monitor_app.h"

namespace CLI {
class App;
}

namespace neuronmon::exporter {

struct MonitorCommandLine {
  MonitorAppOptions options;  // --verbose, --count and --record parse straight into it
  std::string config_file;    // -c: AWS's neuron-monitor configuration ("": the default)
  bool aws_only = false;
  client::ReplayFlags replay;
  client::EndpointFlags endpoint;
};

void AddMonitorOptions(CLI::App& app, MonitorCommandLine& command_line);

// The options to run, or why not. Refusals, in the order they are checked: exit 2 for a --from or
// --to without --replay ("--from and --to need --replay"), for --follow without --events and for
// --events with --record; exit 1 for a configuration file that
// cannot be read or parsed; exit 2 for --record with --replay; exit 1 for
// client::ResolveEndpoint's errors, which reads --token-file. With --replay the daemon options are
// ignored and no endpoint is resolved.
client::OptionsOr<MonitorAppOptions> ResolveMonitorOptions(const MonitorCommandLine& command_line);

}  // namespace neuronmon::exporter
