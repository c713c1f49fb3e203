#include "tui/top_options.h"

#include <CLI/CLI.hpp>
#include <utility>
#include <vector>

#include "client/cluster.h"
#include "proto/common/file_reader.h"
#include "tui/format.h"

namespace neuronmon::tui {
namespace {

bool IsCluster(const TopCommandLine& c) {
  return c.hosts_file || (c.endpoint.connect && c.endpoint.connect->find(',') != std::string::npos);
}

// The refusals of the flags' combinations, before anything is read.
std::optional<client::CommandLineError> CheckModes(const TopCommandLine& c) {
  if (!c.options.record.empty() && (c.replay.given() || IsCluster(c))) {
    return client::CommandLineError{
        "--record keeps one daemon's stream: not with --replay or a cluster view", 2};
  }
  Status st = client::CheckReplayOptions(c.replay, &c.endpoint, c.hosts_file.has_value());
  if (!st.ok()) return client::CommandLineError{st.message(), 2};
  return std::nullopt;
}

// A cluster view's hosts, each checked as --connect checks one, with the settings of its line.
Result<std::vector<client::HostsFileLine>> ClusterHosts(const TopCommandLine& c) {
  if (c.endpoint.socket || c.endpoint.standalone) {
    return Status::InvalidArgument("a cluster view follows TCP daemons only");
  }
  if (!c.hosts_file) {
    Result<std::vector<std::string>> list = client::SplitHostList(*c.endpoint.connect, kMaxHosts);
    if (!list.ok()) return list.status();
    std::vector<client::HostsFileLine> lines;
    for (std::string& address : *list) {
      client::HostsFileLine line;
      line.address = std::move(address);
      lines.push_back(std::move(line));
    }
    return lines;
  }
  if (c.endpoint.connect) {
    return Status::InvalidArgument("--hosts and --connect cannot be used together");
  }
  Result<std::string> text = ReadRegularFile(*c.hosts_file, 1 << 20);
  if (!text.ok()) return text.status();
  return client::ParseHostsFile(*text, *c.hosts_file, kMaxHosts);
}

// What --insecure leaves unverified: one line for one daemon, one for a whole cluster.
std::vector<std::string> InsecureNotices(const AppOptions& o) {
  if (o.hosts.empty()) {
    const std::string n = client::InsecureNotice(o.endpoint, !o.token.empty());
    return n.empty() ? std::vector<std::string>{} : std::vector<std::string>{n};
  }
  std::size_t unverified = 0;
  for (const client::ClusterTarget& t : o.hosts) {
    unverified += client::InsecureNotice(t.endpoint, !t.token.empty()).empty() ? 0 : 1;
  }
  if (unverified == 0) return {};
  if (o.hosts.size() == 1) {
    return {client::InsecureNotice(o.hosts[0].endpoint, !o.hosts[0].token.empty())};
  }
  return {"--insecure: " + std::to_string(unverified) + " of " + std::to_string(o.hosts.size()) +
          " hosts are not verified (certificate and name), and get the token if they have one"};
}

void ApplyEnvironment(bool no_color, const TopEnvironment& env, AppOptions& options) {
  options.color = !no_color && (env.no_color == nullptr || *env.no_color == '\0');
  options.once_width = DimensionFromEnv(env.columns, 120, 20, 1000);
  if (options.once) options.once_height = DimensionFromEnv(env.lines, 0, 6, 1000);
}

}  // namespace

void AddTopOptions(CLI::App& app, TopCommandLine& c) {
  client::AddVersionFlag(app, "neuron-top");
  client::AddEndpointOptions(app, c.endpoint);
  app.add_option("--hosts", c.hosts_file,
                 "cluster view: follow every HOST:PORT listed in FILE (one per line, # comments; "
                 "a line may add token_file=PATH, server_name=NAME and tls_ca=PATH for its host, "
                 "paths relative to FILE's directory; the --tls flags and --insecure apply to "
                 "every host); --connect also takes a comma-separated list");
  app.add_option("--delay", c.options.delay_seconds, "refresh interval in seconds")
      ->check(CLI::Number)
      ->check(CLI::Range(0.1, 3600.0));
  app.add_flag("--no-color", c.no_color, "no colours (also when NO_COLOR is set)");
  app.add_flag("--ascii", c.options.ascii, "plain ASCII glyphs");
  app.add_flag("--once", c.options.once,
               "print one plain-text frame and exit (width: $COLUMNS or 120)");
  client::AddReplayOptions(
      app, c.replay,
      {"show a recording (an archive directory or a --record file) instead of a daemon; "
       "--speed sets its pace",
       "with --replay: start at TIME (2026-12-04T21:30:00Z, 21:30 (UTC), or +10m from the "
       "recording's start)",
       ""});
  client::AddRecordOption(app, c.options.record);
}

client::OptionsOr<AppOptions> ResolveTopOptions(const TopCommandLine& c,
                                                const TopEnvironment& environment) {
  if (std::optional<client::CommandLineError> refused = CheckModes(c)) return *refused;
  AppOptions options = c.options;
  ApplyEnvironment(c.no_color, environment, options);
  if (c.replay.given()) {
    options.replay = c.replay.request;
    if (c.endpoint.simulate.speed) options.replay_speed = *c.endpoint.simulate.speed;
    return options;
  }
  client::EndpointFlags endpoint = c.endpoint;
  std::vector<client::HostsFileLine> lines;
  if (IsCluster(c)) {
    Result<std::vector<client::HostsFileLine>> hosts = ClusterHosts(c);
    if (!hosts.ok()) return client::CommandLineError{hosts.status().message(), 1};
    lines = std::move(*hosts);
    endpoint.connect = lines.front().address;  // validates the other flags, reads --token-file
  }
  Result<client::Endpoint> ep = client::ResolveEndpoint(endpoint, &options.token);
  if (!ep.ok()) return client::CommandLineError{ep.status().message(), 1};
  options.endpoint = std::move(*ep);
  if (!lines.empty()) {
    Result<std::vector<client::ClusterTarget>> hosts =
        client::ResolveClusterHosts(lines, options.endpoint.tls, options.token);
    if (!hosts.ok()) return client::CommandLineError{hosts.status().message(), 1};
    options.hosts = std::move(*hosts);
    // Refused here, not as one more down host retried forever.
    for (const client::ClusterTarget& t : options.hosts) {
      if (Status s = client::CheckTokenTransport(t.endpoint, t.token); !s.ok()) {
        return client::CommandLineError{s.message(), 1};
      }
    }
  }
  options.notices = InsecureNotices(options);
  return options;
}

}  // namespace neuronmon::tui
