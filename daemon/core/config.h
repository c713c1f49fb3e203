// DaemonConfig: neuron-monitord's settings as one typed struct, parsed once at startup and passed
// by const& (no string-keyed lookups). The file is JSON with // and /* */ comments, default path
// kDefaultConfigPath; every key is optional and takes the default DefaultConfig() shows, and an
// unknown key is an error. Command-line flags override fields after parsing (main.cc assigns
// them), then ValidateConfig runs again, so every value rule — ranges, device and scenario
// validity, retention >= period, a token for listeners off loopback — lives there and applies to
// flags and file alike. Problems are reported as data, one string per problem, formatted
// "SOURCE: FIELD: what is wrong" (FIELD is the JSON path, e.g. `limits.queue_depth`), so a
// config check can print all of them and startup can print the first. Plain values and pure
// functions (LoadConfigFile reads one file; validating a scenario path reads that file);
// thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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
  std::string path;   // empty: the default socket path, chosen at runtime
  int mode = 0660;    // permission bits of the socket file, 0..0777
  std::string group;  // empty: the daemon's own group
  bool operator==(const UnixListenerConfig&) const = default;
};

struct ListenersConfig {
  UnixListenerConfig unix_socket;         // JSON "unix"
  std::optional<ListenAddress> tcp;       // JSON "tcp.address"; nullopt: off
  std::optional<ListenAddress> metrics =  // JSON "metrics.address"; nullopt: off
      ListenAddress{"127.0.0.1", 9413};
  bool operator==(const ListenersConfig&) const = default;
};

// Every bound on what clients, scrapers and the history may cost (docs/security.md explains each).
struct LimitsConfig {
  // Stream clients (unix and TCP).
  std::int64_t max_clients = 2048;         // connected at once
  std::int64_t max_clients_per_uid = 256;  // per local user (unix), per address (TCP)
  std::int64_t max_handshaking = 64;       // not yet welcomed; when full the oldest is closed
  Nanos handshake_timeout = std::chrono::seconds(5);
  Nanos subscribe_timeout = std::chrono::seconds(30);  // welcomed but not subscribed
  Nanos write_timeout = std::chrono::seconds(10);
  Nanos idle_timeout = Nanos::zero();  // zero: never
  Nanos heartbeat_interval = std::chrono::seconds(5);
  std::int64_t queue_depth = 64;                       // report frames queued per client
  std::int64_t max_queue_bytes = 4 << 20;              // all frames queued per client
  std::int64_t max_control_frames = 64;                // notices and errors queued, unread
  std::int64_t max_queued_bytes_total = 64 << 20;      // all clients' queues together
  Nanos subscribe_interval = std::chrono::seconds(1);  // at most one Subscribe applied per
  std::int64_t max_tag_filter_bytes = 256;
  std::int64_t filter_compiles_per_second = 5;  // new tag filters, per uid or address
  // Prometheus /metrics.
  std::int64_t max_scrapes = 16;              // concurrent scrapes
  std::int64_t metrics_max_connections = 64;  // open connections
  std::int64_t metrics_max_pending = 16;      // of which not yet past one authorized request
  Nanos metrics_request_timeout = std::chrono::seconds(10);
  Nanos metrics_idle_timeout = std::chrono::minutes(2);
  Nanos metrics_connection_lifetime = std::chrono::minutes(10);
  std::int64_t metrics_max_requests = 1000;  // per connection
  // Memory.
  std::int64_t max_history_bytes = 128 << 20;  // retained snapshots, estimated
  // A real host (neurondev): descriptors kept open on the driver's tree, and the longest line
  // (one document) taken from AWS's neuron-monitor.
  std::int64_t sysfs_max_open_files = 8192;
  std::int64_t neuron_monitor_max_line_bytes = 4 << 20;
  bool operator==(const LimitsConfig&) const = default;
};

// The on-disk archive of snapshots (docs/recorder.md).
struct RecorderConfig {  // JSON "recorder"
  bool enabled = true;
  // "": $STATE_DIRECTORY/archive under systemd (/var/lib/neuron-monitor/archive), else
  // /var/lib/neuron-monitor/archive as root, else $XDG_STATE_HOME/neuron-monitor/archive.
  std::string directory;
  std::int64_t max_bytes = std::int64_t{1} << 30;  // the archive's files together
  Nanos retention = std::chrono::hours(24 * 30);   // zero: only max_bytes
  Nanos segment = std::chrono::minutes(10);        // a new file this often
  bool operator==(const RecorderConfig&) const = default;
};

// Incident bundles (docs/recorder.md, "Incidents"): when a runtime's verdict other than healthy
// holds for `hold` (errors and hang: `hold_errors`), the history from `before` the moment it is
// declared to `after` it is saved as one archive file in `directory`, at most one per verdict
// episode; the oldest files go first beyond `max_count` or `max_bytes`.
struct IncidentsConfig {  // JSON "incidents"
  bool enabled = true;
  // "": the archive's sibling, /var/lib/neuron-monitor/incidents under systemd or as root, else
  // $XDG_STATE_HOME/neuron-monitor/incidents.
  std::string directory;
  Nanos hold = std::chrono::minutes(2);
  Nanos hold_errors = std::chrono::seconds(10);
  Nanos before = std::chrono::minutes(5);
  Nanos after = std::chrono::minutes(1);
  std::int64_t max_count = 100;
  std::int64_t max_bytes = std::int64_t{256} << 20;
  bool operator==(const IncidentsConfig&) const = default;
};

// A real host on Kubernetes (docs/attribution.md): the kubelet's PodResources API says which pod
// container was allocated which Neuron devices.
struct KubernetesConfig {  // JSON "kubernetes"
  // true: ask the kubelet when its socket exists (no socket: not on Kubernetes, silently);
  // false: never (no pod names, no allocations).
  bool enabled = true;
  std::string pod_resources_socket = "/var/lib/kubelet/pod-resources/kubelet.sock";
  bool operator==(const KubernetesConfig&) const = default;
};

// A real host's kernel log (docs/health.md): the driver's NEURON_HW_ERR events, per device.
struct KernelLogConfig {  // JSON "kernel_log"
  bool enabled = true;    // false: never read it (the events are reported unavailable)
  std::string path = "/dev/kmsg";
  std::int64_t max_records_per_read = 10000;  // records read per sample; the rest wait
  bool operator==(const KernelLogConfig&) const = default;
};

struct DaemonConfig {
  std::string device = "auto";  // "auto", "neuron", or simdev::ParseDeviceSpec syntax
  std::string sysfs_root = "/sys";
  std::string proc_root = "/proc";
  std::string neuron_monitor = "/opt/aws/neuron/bin/neuron-monitor";  // "": none
  KubernetesConfig kubernetes;
  KernelLogConfig kernel_log;
  std::string scenario = "healthy-training";  // built-in scenario name or a path to a .json file
  std::int64_t seed = 1;                      // >= 0
  // A cluster simulation: this daemon is node `node` of `nodes` (0: as many as the scenario says).
  std::int64_t node = 0;
  std::int64_t nodes = 0;
  Nanos period = std::chrono::seconds(1);  // base sampling period
  double speed = 1;                        // simulated clock speed factor (sim: devices)
  Nanos history_retention = std::chrono::minutes(10);
  ListenersConfig listeners;
  std::string auth_token_file;  // empty: no token; required by listeners off loopback
  LimitsConfig limits;
  RecorderConfig recorder;
  IncidentsConfig incidents;
  LogLevel log_level = LogLevel::kInfo;
  // Not in the file (--replay, --from): serve this recording instead of a device.
  std::string replay;
  std::string replay_from;
  bool operator==(const DaemonConfig&) const = default;
};

DaemonConfig DefaultConfig();

// The text of packaging/neuron-monitord.json, the commented default file; it parses to
// DefaultConfig().
std::string DefaultConfigText();

// Parses and validates the text of a config file; `source` names it in problems (usually its
// path). On failure appends EVERY problem found to `problems` (when not null) — first those met
// while reading (malformed JSON with line and column, wrong types, bad syntax, unknown keys),
// then ValidateConfig's, each in field order — and returns kInvalidArgument whose message is the
// first of them. A field with a problem keeps its default, so later checks see a sane value.
Result<DaemonConfig> ParseConfig(std::string_view text, const std::string& source,
                                 std::vector<std::string>* problems);

// Reads `path` (at most 1 MiB) and parses it as ParseConfig does with `path` as the source. A
// file that cannot be read is one problem "PATH: cannot open: <strerror>", with kNotFound when
// it does not exist (so a caller may fall back to defaults) and kIoError otherwise.
Result<DaemonConfig> LoadConfigFile(const std::string& path, std::vector<std::string>* problems);

// Checks every value rule on `config` and appends each violation, "SOURCE: FIELD: what", to
// `problems` (when not null). Returns Ok or kInvalidArgument with the first problem it found.
Status ValidateConfig(const DaemonConfig& config, std::vector<std::string>* problems,
                      const std::string& source);

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

// Where the archive goes when recorder.directory is "" (see RecorderConfig), from the
// environment: STATE_DIRECTORY, the effective uid, XDG_STATE_HOME and HOME. Empty when none says.
std::string DefaultArchiveDirectory();
// The same for incidents.directory: "incidents" beside the archive's default.
std::string DefaultIncidentDirectory();

// `config` as the JSON of a config file (every key, effective values; durations as "10m"),
// which ParseConfig reads back to `config` (not --replay and --from, which are not in the file).
std::string ConfigToJson(const DaemonConfig& config);

// "error", "warn", "info", "debug".
std::string LogLevelName(LogLevel level);
// The inverse of LogLevelName; anything else is kInvalidArgument listing the choices.
Result<LogLevel> ParseLogLevel(std::string_view name);

// An octal permission string such as "0660" or "660" (1 to 4 octal digits, at most 0777).
Result<int> ParseFileMode(std::string_view text);
// Four octal digits, "0660". REQUIRES: 0 <= mode <= 0777.
std::string FormatFileMode(int mode);

}  // namespace neuronmon::daemon
