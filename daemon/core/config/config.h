// DaemonConfig: neuron-monitord's settings as one typed struct, parsed once at startup and passed
// by const& (no string-keyed lookups). It embeds the components' own option structs, so each
// default is written once, in its component; the settings table (settings.h) says which JSON key
// sets which member. The file is JSON with // and /* */ comments, default path kDefaultConfigPath;
// every key is optional and takes the default DefaultConfig() shows, and an unknown key is an
// error; reading, checking and printing the file is config_file.h's. Command-line flags override
// fields after parsing (server/command_line.h), then ValidateConfig runs again, so every value rule
// — ranges, device and scenario validity, retention >= period, a token for listeners off loopback —
// applies to flags and file alike. Plain values and pure functions; thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/core/archive/incident.h"
#include "daemon/core/archive/recorder.h"
#include "daemon/core/backend.h"
#include "daemon/core/config/server_options.h"
#include "daemon/core/config/tls_options.h"
#include "daemon/core/events.h"
#include "daemon/core/jobs/job_book.h"
#include "proto/common/clock.h"
#include "proto/common/status.h"

namespace neuronmon::daemon {

inline constexpr std::string_view kDefaultConfigPath = "/etc/neuron-monitor/neuron-monitord.json";

enum class LogLevel { kError, kWarn, kInfo, kDebug };

// A TCP endpoint. `host` is an IPv4 address, an IPv6 address without brackets ("::1") or a host
// name; `port` is 1..65535.
struct ListenAddress {
  std::string host;
  std::uint16_t port = 0;
  bool operator==(const ListenAddress&) const = default;
};

struct UnixListenerConfig {  // JSON "listeners.unix"
  bool enabled = true;
  UnixListenOptions options;  // path "": the default socket path, chosen at runtime
  bool operator==(const UnixListenerConfig&) const = default;
};

struct ListenersConfig {
  UnixListenerConfig unix_socket;    // JSON "unix"
  std::optional<ListenAddress> tcp;  // JSON "tcp.address"; nullopt: off
  TlsServerOptions tcp_tls;          // JSON "tcp.tls"
  // JSON "tcp.allow_plaintext": a stream listener off loopback may go without TLS.
  bool tcp_allow_plaintext = false;
  std::optional<ListenAddress> metrics =  // JSON "metrics.address"; nullopt: off
      ListenAddress{"127.0.0.1", 9413};
  TlsServerOptions metrics_tls;  // JSON "metrics.tls"
  bool operator==(const ListenersConfig&) const = default;
};

// The on-disk archive of snapshots (docs/recorder.md).
struct RecorderConfig {  // JSON "recorder"
  bool enabled = true;
  // directory "": $STATE_DIRECTORY/archive under systemd (/var/lib/neuron-monitor/archive), else
  // /var/lib/neuron-monitor/archive as root, else $XDG_STATE_HOME/neuron-monitor/archive.
  RecorderOptions options;
  bool operator==(const RecorderConfig&) const = default;
};

// Incident bundles (docs/recorder.md, "Incidents"): when a runtime's verdict other than healthy
// holds for `tracker.hold` (errors and hang: `hold_errors`), the history from `before` the moment
// it is declared to `after` it is saved as one archive file in `directory`, at most one per
// verdict episode; the oldest files go first beyond `limits.max_count` or `max_bytes`.
struct IncidentsConfig {  // JSON "incidents"
  bool enabled = true;
  // "": the archive's sibling, /var/lib/neuron-monitor/incidents under systemd or as root, else
  // $XDG_STATE_HOME/neuron-monitor/incidents.
  std::string directory;
  IncidentOptions tracker;
  IncidentLimits limits;
  bool operator==(const IncidentsConfig&) const = default;
};

// The job accounting (docs/jobs.md): how jobs end and how many are kept, and where they are saved.
struct JobsConfig {  // JSON "jobs"
  JobOptions options;
  // "": jobs.pb in the archive directory (/var/lib/neuron-monitor/archive/jobs.pb); not
  // saved at all when the recorder is off and this is "".
  std::string file;
  Nanos save_interval = std::chrono::seconds(30);  // live jobs saved at most this often
  bool operator==(const JobsConfig&) const = default;
};

// The components' own option structs, embedded: each default is written once, in its component,
// and the settings table (settings.h) says which JSON key sets which member.
struct DaemonConfig {
  // device, scenario, seed, node, nodes, speed; sysfs_root, proc_root, neuron_monitor,
  // kubernetes.*, kernel_log.* and the real host's limits (backend.host); --replay and --from.
  BackendOptions backend;
  Nanos period = std::chrono::seconds(1);  // base sampling period
  Nanos history_retention = std::chrono::minutes(10);
  std::uint64_t max_history_bytes = 128 << 20;  // limits.max_history_bytes: retained snapshots
  ListenersConfig listeners;
  std::string auth_token_file;  // empty: no token; required by listeners off loopback
  ServerLimits stream;          // limits.* of stream clients (write_timeout also bounds /metrics)
  HttpServerOptions metrics;    // limits.max_scrapes, limits.metrics_*
  RecorderConfig recorder;
  IncidentsConfig incidents;
  EventLogOptions events;  // events.*: what /events and a resuming client can still get
  JobsConfig jobs;
  LogLevel log_level = LogLevel::kInfo;
  bool operator==(const DaemonConfig&) const = default;
};

DaemonConfig DefaultConfig();

// "HOST:PORT" with HOST an IPv4 address, a host name or "[IPv6]"; PORT 1..65535. Errors are
// kInvalidArgument, quote `text` and say what is wrong (e.g. `"localhost": missing port ...`).
Result<ListenAddress> ParseListenAddress(std::string_view text);
// The text ParseListenAddress reads back: "127.0.0.1:9413", "[::1]:9413".
std::string FormatListenAddress(const ListenAddress& address);
// True for 127.0.0.0/8, ::1 (and ::ffff:127.x.y.z) and "localhost"; false for wildcard addresses
// and every other host name.
bool IsLoopback(const ListenAddress& address);

// Whether clients of the TCP stream listener must present the auth token: always off loopback,
// and on loopback too unless the unix socket lets every local user connect (mode o+w) — otherwise
// loopback TCP would let any local user around the socket's group restriction.
bool TcpRequiresToken(const DaemonConfig& config);
// The loopback half of that rule, for a TCP socket systemd passes (and TcpRequiresToken).
bool LoopbackTcpRequiresToken(const DaemonConfig& config);

// What the daemon warns of at start-up about `config`'s listeners: one line per listener off
// loopback without TLS (a stream listener allowed by listeners.tcp.allow_plaintext, /metrics),
// naming its address and what crosses the network in clear.
std::vector<std::string> PlaintextWarnings(const DaemonConfig& config);

// Where the archive goes when recorder.directory is "" (see RecorderConfig), from the
// environment: STATE_DIRECTORY, the effective uid, XDG_STATE_HOME and HOME. Empty when none says.
std::string DefaultArchiveDirectory();
// The same for incidents.directory: "incidents" beside the archive's default.
std::string DefaultIncidentDirectory();

// "error", "warn", "info", "debug".
std::string LogLevelName(LogLevel level);
// The inverse of LogLevelName; anything else is kInvalidArgument listing the choices.
Result<LogLevel> ParseLogLevel(std::string_view name);

// An octal permission string such as "0660" or "660" (1 to 4 octal digits, at most 0777).
Result<int> ParseFileMode(std::string_view text);
// Four octal digits, "0660". REQUIRES: 0 <= mode <= 0777.
std::string FormatFileMode(int mode);

}  // namespace neuronmon::daemon
