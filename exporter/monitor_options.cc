#include "exporter/monitor_options.h"

#include <CLI/CLI.hpp>
#include <utility>

namespace neuronmon::exporter {

void AddMonitorOptions(CLI::App& app, MonitorCommandLine& c) {
  client::AddVersionFlag(app, "neuron-monitor");
  app.add_option("-c,--config-file", c.config_file, "neuron-monitor JSON configuration file");
  app.add_option("--verbose", c.options.verbose, "0-4: progress on stderr")
      ->check(CLI::Range(0, 4));
  app.add_option("--count", c.options.count, "exit after N documents");
  app.add_flag("--aws-only", c.aws_only, "print only AWS neuron-monitor's own groups and keys");
  app.add_flag("--events", c.options.events,
               "print the daemon's events (docs/events.md) as JSON lines instead of documents: "
               "those it keeps, then exit (with --replay: those recorded)");
  app.add_flag("-f,--follow", c.options.follow,
               "with --events: then keep printing new events, across daemon restarts");
  client::AddReplayOptions(app, c.replay,
                           {"print the documents of a recording (an archive directory or a "
                            "--record file) instead of connecting",
                            "with --replay: start at TIME (2026-12-04T21:30:00Z, 21:30 (UTC), or "
                            "+10m from the recording's start)",
                            "with --replay: stop after TIME (same forms)"});
  client::AddRecordOption(app, c.options.record);
  client::AddEndpointOptions(app, c.endpoint);
}

client::OptionsOr<MonitorAppOptions> ResolveMonitorOptions(const MonitorCommandLine& c) {
  if (Status st = client::CheckReplayOptions(c.replay); !st.ok()) {
    return client::CommandLineError{st.message(), 2};
  }
  if (c.options.follow && !c.options.events) {
    return client::CommandLineError{"--follow needs --events", 2};
  }
  if (c.options.events && !c.options.record.empty()) {
    return client::CommandLineError{"--record keeps reports, not --events", 2};
  }
  MonitorAppOptions options = c.options;
  options.extensions = !c.aws_only;
  options.config = DefaultMonitorConfig();
  if (!c.config_file.empty()) {
    Result<MonitorConfig> config = LoadMonitorConfig(c.config_file);
    if (!config.ok()) return client::CommandLineError{config.status().message(), 1};
    options.config = std::move(*config);
  }
  if (c.replay.given()) {
    if (!options.record.empty()) {
      return client::CommandLineError{"--record and --replay cannot be used together", 2};
    }
    options.replay = c.replay.request;
    return options;
  }
  Result<client::Endpoint> ep = client::ResolveEndpoint(c.endpoint, &options.token);
  if (!ep.ok()) return client::CommandLineError{ep.status().message(), 1};
  options.endpoint = std::move(*ep);
  return options;
}

}  // namespace neuronmon::exporter
