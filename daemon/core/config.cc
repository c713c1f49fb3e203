#include "daemon/core/config.h"

#include <arpa/inet.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <utility>

#include "daemon/core/backend.h"
#include "daemon/core/report/history.h"
#include "proto/common/duration.h"
#include "proto/common/json_reader.h"
#include "proto/common/state_path.h"
#include "simdev/instance.h"
#include "simdev/preset.h"
#include "simdev/scenario_library.h"

namespace neuronmon::daemon {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using Found = std::vector<std::string>;  // "FIELD: what is wrong", before the source is prefixed

constexpr std::size_t kMaxConfigBytes = 1 << 20;
constexpr std::size_t kMaxSocketPathBytes = 107;  // sockaddr_un::sun_path less its NUL
constexpr Nanos kMinPeriod = milliseconds(10);
constexpr Nanos kMaxPeriod = hours(1);
constexpr Nanos kMaxRetention = hours(24);
constexpr Nanos kMinTimeout = milliseconds(100);
constexpr Nanos kMaxTimeout = hours(1);
constexpr Nanos kMaxIdleTimeout = hours(24);
constexpr double kMaxSpeed = 10000;
// When a sized snapshot is taken: past model loading, so the runtimes and their memory are there.
constexpr Nanos kSizingTime = std::chrono::minutes(2);
// The analyzer's verdicts kept beside each snapshot.
constexpr std::size_t kAnalysisBytesPerSnapshot = 512;
constexpr std::int64_t kAnyInt = std::numeric_limits<std::int64_t>::max();
constexpr double kAnyNumber = std::numeric_limits<double>::max();
constexpr const char* kHostNameChars =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-";
constexpr const char* kMissingPort = "missing port (use HOST:PORT, e.g. \"127.0.0.1:9413\")";

constexpr std::pair<LogLevel, const char*> kLogLevels[] = {
    {LogLevel::kError, "error"},
    {LogLevel::kWarn, "warn"},
    {LogLevel::kInfo, "info"},
    {LogLevel::kDebug, "debug"},
};

// ---- Reading: types and syntax only. Value rules live in CheckValues so flags meet them too.

// A string field parsed by `parse` (whose Result<T> messages become problems).
template <typename T, typename Parse>
T ReadParsed(JsonReader& r, std::string_view key, T fallback, Parse parse) {
  const nlohmann::json* v = r.Raw(key);
  if (v == nullptr) return fallback;
  if (!v->is_string()) {
    r.Problem(key, "expected a string");
    return fallback;
  }
  Result<T> parsed = parse(v->get_ref<const std::string&>());
  if (!parsed.ok()) {
    r.Problem(key, parsed.status().message());
    return fallback;
  }
  return std::move(parsed).value();
}

Result<std::optional<ListenAddress>> ParseOptionalAddress(std::string_view text) {
  if (text.empty()) return std::optional<ListenAddress>();
  Result<ListenAddress> address = ParseListenAddress(text);
  if (!address.ok()) return address.status();
  return std::optional<ListenAddress>(std::move(address).value());
}

template <typename Read>
void ReadObject(JsonReader& parent, std::string_view key, Found* found, Read read) {
  const nlohmann::json* object = parent.Object(key);
  if (object == nullptr) return;
  JsonReader r(*object, parent.PathOf(key), found);
  read(r);
  r.Finish();
}

void ReadAddressObject(JsonReader& parent, std::string_view key, Found* found,
                       std::optional<ListenAddress>& address) {
  ReadObject(parent, key, found, [&](JsonReader& r) {
    address = ReadParsed(r, "address", address, ParseOptionalAddress);
  });
}

void ReadListeners(JsonReader& r, Found* found, ListenersConfig& l) {
  ReadObject(r, "unix", found, [&](JsonReader& u) {
    l.unix_socket.enabled = u.Bool("enabled", l.unix_socket.enabled);
    l.unix_socket.path = u.String("path", l.unix_socket.path);
    l.unix_socket.mode = ReadParsed(u, "mode", l.unix_socket.mode, ParseFileMode);
    l.unix_socket.group = u.String("group", l.unix_socket.group);
  });
  ReadAddressObject(r, "tcp", found, l.tcp);
  ReadAddressObject(r, "metrics", found, l.metrics);
}

// JsonReader::Integer clamps values above INT64_MAX; refuse them rather than read another number.
std::int64_t ReadInteger(JsonReader& r, std::string_view key, std::int64_t fallback) {
  const nlohmann::json* v = r.Raw(key);
  if (v != nullptr && v->is_number_unsigned() && v->get<std::uint64_t>() > kAnyInt) {
    r.Problem(key, "too large (got " + v->dump() + ")");
    return fallback;
  }
  return r.Integer(key, fallback, -kAnyInt - 1, kAnyInt);
}

Nanos ReadDuration(JsonReader& r, std::string_view key, Nanos fallback) {
  return r.Duration(key, fallback, Nanos::zero(), Nanos::max());
}

void ReadLimits(JsonReader& r, LimitsConfig& l) {
  l.max_clients = ReadInteger(r, "max_clients", l.max_clients);
  l.max_clients_per_uid = ReadInteger(r, "max_clients_per_uid", l.max_clients_per_uid);
  l.max_handshaking = ReadInteger(r, "max_handshaking", l.max_handshaking);
  l.handshake_timeout = ReadDuration(r, "handshake_timeout", l.handshake_timeout);
  l.subscribe_timeout = ReadDuration(r, "subscribe_timeout", l.subscribe_timeout);
  l.write_timeout = ReadDuration(r, "write_timeout", l.write_timeout);
  l.idle_timeout = ReadDuration(r, "idle_timeout", l.idle_timeout);
  l.heartbeat_interval = ReadDuration(r, "heartbeat_interval", l.heartbeat_interval);
  l.queue_depth = ReadInteger(r, "queue_depth", l.queue_depth);
  l.max_queue_bytes = ReadInteger(r, "max_queue_bytes", l.max_queue_bytes);
  l.max_control_frames = ReadInteger(r, "max_control_frames", l.max_control_frames);
  l.max_queued_bytes_total = ReadInteger(r, "max_queued_bytes_total", l.max_queued_bytes_total);
  l.subscribe_interval = ReadDuration(r, "subscribe_interval", l.subscribe_interval);
  l.max_tag_filter_bytes = ReadInteger(r, "max_tag_filter_bytes", l.max_tag_filter_bytes);
  l.filter_compiles_per_second =
      ReadInteger(r, "filter_compiles_per_second", l.filter_compiles_per_second);
  l.max_scrapes = ReadInteger(r, "max_scrapes", l.max_scrapes);
  l.metrics_max_connections = ReadInteger(r, "metrics_max_connections", l.metrics_max_connections);
  l.metrics_max_pending = ReadInteger(r, "metrics_max_pending", l.metrics_max_pending);
  l.metrics_request_timeout = ReadDuration(r, "metrics_request_timeout", l.metrics_request_timeout);
  l.metrics_idle_timeout = ReadDuration(r, "metrics_idle_timeout", l.metrics_idle_timeout);
  l.metrics_connection_lifetime =
      ReadDuration(r, "metrics_connection_lifetime", l.metrics_connection_lifetime);
  l.metrics_max_requests = ReadInteger(r, "metrics_max_requests", l.metrics_max_requests);
  l.max_history_bytes = ReadInteger(r, "max_history_bytes", l.max_history_bytes);
  l.sysfs_max_open_files = ReadInteger(r, "sysfs_max_open_files", l.sysfs_max_open_files);
  l.neuron_monitor_max_line_bytes =
      ReadInteger(r, "neuron_monitor_max_line_bytes", l.neuron_monitor_max_line_bytes);
}

DaemonConfig ReadConfig(const nlohmann::json& json, Found* found) {
  DaemonConfig c = DefaultConfig();
  JsonReader r(json, "", found);
  c.device = r.String("device", c.device);
  c.sysfs_root = r.String("sysfs_root", c.sysfs_root);
  c.proc_root = r.String("proc_root", c.proc_root);
  c.neuron_monitor = r.String("neuron_monitor", c.neuron_monitor);
  ReadObject(r, "kubernetes", found, [&](JsonReader& k) {
    c.kubernetes.enabled = k.Bool("enabled", c.kubernetes.enabled);
    c.kubernetes.pod_resources_socket =
        k.String("pod_resources_socket", c.kubernetes.pod_resources_socket);
  });
  ReadObject(r, "kernel_log", found, [&](JsonReader& k) {
    c.kernel_log.enabled = k.Bool("enabled", c.kernel_log.enabled);
    c.kernel_log.path = k.String("path", c.kernel_log.path);
    c.kernel_log.max_records_per_read =
        ReadInteger(k, "max_records_per_read", c.kernel_log.max_records_per_read);
  });
  c.scenario = r.String("scenario", c.scenario);
  c.seed = ReadInteger(r, "seed", c.seed);
  c.node = ReadInteger(r, "node", c.node);
  c.nodes = ReadInteger(r, "nodes", c.nodes);
  c.period = ReadDuration(r, "period", c.period);
  c.speed = r.Number("speed", c.speed, -kAnyNumber, kAnyNumber);
  c.history_retention = ReadDuration(r, "history_retention", c.history_retention);
  ReadObject(r, "listeners", found, [&](JsonReader& l) { ReadListeners(l, found, c.listeners); });
  c.auth_token_file = r.String("auth_token_file", c.auth_token_file);
  ReadObject(r, "limits", found, [&](JsonReader& l) { ReadLimits(l, c.limits); });
  ReadObject(r, "recorder", found, [&](JsonReader& l) {
    c.recorder.enabled = l.Bool("enabled", c.recorder.enabled);
    c.recorder.directory = l.String("directory", c.recorder.directory);
    c.recorder.max_bytes = ReadInteger(l, "max_bytes", c.recorder.max_bytes);
    c.recorder.retention = ReadDuration(l, "retention", c.recorder.retention);
    c.recorder.segment = ReadDuration(l, "segment", c.recorder.segment);
  });
  ReadObject(r, "incidents", found, [&](JsonReader& l) {
    IncidentsConfig& i = c.incidents;
    i.enabled = l.Bool("enabled", i.enabled);
    i.directory = l.String("directory", i.directory);
    i.hold = ReadDuration(l, "hold", i.hold);
    i.hold_errors = ReadDuration(l, "hold_errors", i.hold_errors);
    i.before = ReadDuration(l, "before", i.before);
    i.after = ReadDuration(l, "after", i.after);
    i.max_count = ReadInteger(l, "max_count", i.max_count);
    i.max_bytes = ReadInteger(l, "max_bytes", i.max_bytes);
  });
  c.log_level = ReadParsed(r, "log_level", c.log_level, ParseLogLevel);
  r.Finish();
  return c;
}

// ---- Value rules, worded as JsonReader words its range problems.

std::string Quoted(Nanos d) {
  return d < Nanos::zero() ? "a negative duration" : "\"" + FormatDuration(d) + "\"";
}

void CheckRange(Found* found, std::string_view field, std::int64_t v, std::int64_t min,
                std::int64_t max) {
  if (v >= min && v <= max) return;
  found->push_back(std::string(field) + ": must be between " + std::to_string(min) + " and " +
                   std::to_string(max) + " (got " + std::to_string(v) + ")");
}

void CheckDuration(Found* found, std::string_view field, Nanos v, Nanos min, Nanos max) {
  if (v >= min && v <= max) return;
  found->push_back(std::string(field) + ": must be between " + FormatDuration(min) + " and " +
                   FormatDuration(max) + " (got " + Quoted(v) + ")");
}

std::string FormatNumber(double d) {
  char buffer[32];
  const std::to_chars_result end = std::to_chars(buffer, buffer + sizeof buffer, d);
  return std::string(buffer, end.ptr);
}

// The history's size for this instance, estimated from one snapshot of it, must fit the memory
// budget (the systemd unit's MemoryMax= is twice the default budget).
void CheckHistoryMemory(const DaemonConfig& c, const Snapshot& sample, Found* found) {
  const std::size_t capacity = HistoryCapacity(c.history_retention, c.period);
  const double bytes = static_cast<double>(capacity) *
                           static_cast<double>(OwnBytes(sample) + kAnalysisBytesPerSnapshot) +
                       static_cast<double>(SharedMemoryBytes(sample));
  if (bytes <= static_cast<double>(c.limits.max_history_bytes)) return;
  found->push_back("history_retention: " + FormatDuration(c.history_retention) + " of " + c.device +
                   " snapshots every " + FormatDuration(c.period) + " needs about " +
                   std::to_string(static_cast<std::int64_t>(bytes / (1 << 20))) +
                   " MiB, over limits.max_history_bytes (" +
                   std::to_string(c.limits.max_history_bytes >> 20) +
                   " MiB); shorten history_retention, lengthen period, or raise the limit (and "
                   "the service's MemoryMax=)");
}

// A simulated device: its preset, scenario and node must exist and fit, and its history the
// memory budget.
void CheckSimulator(const DaemonConfig& c, Found* found) {
  Result<simdev::InstanceSpec> d =
      simdev::ParseDeviceSpec(c.device == "auto" ? std::string(kAutoSimDevice) : c.device);
  if (!d.ok()) found->push_back("device: " + d.status().message());
  Result<simdev::Scenario> s = simdev::LoadScenario(c.scenario);
  if (!s.ok()) found->push_back("scenario: " + s.status().message());
  CheckRange(found, "node", c.node, 0, simdev::kMaxNodes - 1);
  CheckRange(found, "nodes", c.nodes, 0, simdev::kMaxNodes);
  if (s.ok()) PlaceNode(*s, c.node, c.nodes);
  // The scenario must also fit the device (its runtimes' and faults' devices exist on it).
  if (d.ok() && s.ok() && c.seed >= 0) {
    auto built = simdev::Instance::Create(*d, std::move(*s), static_cast<std::uint64_t>(c.seed));
    if (!built.ok()) found->push_back("scenario: " + built.status().message());
    if (built.ok() && c.period >= kMinPeriod && c.period <= kMaxPeriod &&
        c.history_retention >= c.period && c.history_retention <= kMaxRetention) {
      CheckHistoryMemory(c, (*built)->Read(kSizingTime), found);
    }
  }
}

void CheckSampling(const DaemonConfig& c, Found* found) {
  if (c.sysfs_root.empty() || c.sysfs_root.front() != '/') {
    found->push_back("sysfs_root: must be an absolute path");
  }
  if (c.proc_root.empty() || c.proc_root.front() != '/') {
    found->push_back("proc_root: must be an absolute path");
  }
  if (!c.neuron_monitor.empty() && c.neuron_monitor.front() != '/') {
    found->push_back("neuron_monitor: must be an absolute path, or \"\" for none");
  }
  // A unix socket's path fits in sockaddr_un (108 bytes with its NUL).
  const std::string& kubelet = c.kubernetes.pod_resources_socket;
  if (kubelet.empty() || kubelet.front() != '/' || kubelet.size() > 107) {
    found->push_back(
        "kubernetes.pod_resources_socket: must be an absolute path of at most 107 bytes");
  }
  if (c.kernel_log.path.empty() || c.kernel_log.path.front() != '/') {
    found->push_back("kernel_log.path: must be an absolute path");
  }
  CheckRange(found, "kernel_log.max_records_per_read", c.kernel_log.max_records_per_read, 1,
             1000000);
  // The real device is checked when the daemon starts (it is there or it is not), as is a
  // recording to replay; "auto" falls back to the simulator, whose settings must then be valid.
  if (c.device == "neuron") return;
  if (c.replay.empty()) CheckSimulator(c, found);
  CheckRange(found, "seed", c.seed, 0, kAnyInt);
  CheckDuration(found, "period", c.period, kMinPeriod, kMaxPeriod);
  if (!(c.speed > 0 && c.speed <= kMaxSpeed)) {
    found->push_back("speed: must be above 0 and at most 10000 (got " + FormatNumber(c.speed) +
                     ")");
  }
  if (c.history_retention > kMaxRetention) {
    CheckDuration(found, "history_retention", c.history_retention, Nanos::zero(), kMaxRetention);
  } else if (c.history_retention < c.period) {
    found->push_back("history_retention: must be at least period, " + Quoted(c.period) + " (got " +
                     Quoted(c.history_retention) + ")");
  }
}

// A listener others can reach hands out every metric, so it must ask for a token.
void CheckExposure(const std::optional<ListenAddress>& address, std::string_view field,
                   const DaemonConfig& c, Found* found) {
  if (address.has_value() && !IsLoopback(*address) && c.auth_token_file.empty()) {
    found->push_back(std::string(field) + ": a listener off loopback requires auth_token_file");
  }
}

void CheckListeners(const DaemonConfig& c, Found* found) {
  const UnixListenerConfig& u = c.listeners.unix_socket;
  if (!u.path.empty() && u.path.front() != '/') {
    found->push_back("listeners.unix.path: must be an absolute path (got \"" + u.path + "\")");
  } else if (u.path.size() > kMaxSocketPathBytes) {
    found->push_back("listeners.unix.path: longer than " + std::to_string(kMaxSocketPathBytes) +
                     " bytes, the limit for a unix socket path");
  }
  if (u.mode < 0 || u.mode > 0777) found->push_back("listeners.unix.mode: must be 0000 to 0777");
  CheckExposure(c.listeners.tcp, "listeners.tcp.address", c, found);
  CheckExposure(c.listeners.metrics, "listeners.metrics.address", c, found);
  if (c.listeners.tcp && IsLoopback(*c.listeners.tcp) && TcpRequiresToken(c) &&
      c.auth_token_file.empty()) {
    found->push_back(
        "listeners.tcp.address: every local user can connect to loopback TCP, which would bypass "
        "the unix socket's mode " +
        FormatFileMode(u.mode) +
        "; set auth_token_file (clients pass it with --token-file), or make listeners.unix.mode "
        "0666 if every user may read the metrics");
  }
}

void CheckRecorder(const RecorderConfig& r, Found* found) {
  if (!r.directory.empty() && r.directory.front() != '/') {
    found->push_back("recorder.directory: must be an absolute path, or \"\" for the default");
  }
  CheckRange(found, "recorder.max_bytes", r.max_bytes, 16 << 20, std::int64_t{1} << 50);
  CheckDuration(found, "recorder.segment", r.segment, std::chrono::minutes(1),
                std::chrono::hours(24));
  if (r.retention != Nanos::zero() && r.retention < r.segment) {
    found->push_back(
        "recorder.retention: must be \"0s\" (size cap only) or at least "
        "recorder.segment, " +
        Quoted(r.segment) + " (got " + Quoted(r.retention) + ")");
  }
}

void CheckIncidents(const IncidentsConfig& i, Found* found) {
  if (!i.directory.empty() && i.directory.front() != '/') {
    found->push_back("incidents.directory: must be an absolute path, or \"\" for the default");
  }
  CheckDuration(found, "incidents.hold", i.hold, Nanos::zero(), std::chrono::hours(24));
  CheckDuration(found, "incidents.hold_errors", i.hold_errors, Nanos::zero(),
                std::chrono::hours(24));
  CheckDuration(found, "incidents.before", i.before, Nanos::zero(), std::chrono::hours(1));
  CheckDuration(found, "incidents.after", i.after, Nanos::zero(), std::chrono::hours(1));
  CheckRange(found, "incidents.max_count", i.max_count, 1, 100000);
  CheckRange(found, "incidents.max_bytes", i.max_bytes, 16 << 20, std::int64_t{1} << 50);
}

void CheckLimits(const LimitsConfig& l, Found* found) {
  constexpr std::int64_t kGiB = 1 << 30;
  CheckRange(found, "limits.max_clients", l.max_clients, 1, 100000);
  CheckRange(found, "limits.max_clients_per_uid", l.max_clients_per_uid, 1, 100000);
  CheckRange(found, "limits.max_handshaking", l.max_handshaking, 1, 100000);
  CheckDuration(found, "limits.handshake_timeout", l.handshake_timeout, kMinTimeout, kMaxTimeout);
  CheckDuration(found, "limits.subscribe_timeout", l.subscribe_timeout, Nanos::zero(),
                kMaxIdleTimeout);
  CheckDuration(found, "limits.write_timeout", l.write_timeout, kMinTimeout, kMaxTimeout);
  CheckDuration(found, "limits.idle_timeout", l.idle_timeout, Nanos::zero(), kMaxIdleTimeout);
  // Clients take 20 s without a byte for a lost connection: heartbeats must come well before.
  CheckDuration(found, "limits.heartbeat_interval", l.heartbeat_interval, kMinTimeout,
                std::chrono::seconds(10));
  CheckRange(found, "limits.queue_depth", l.queue_depth, 1, 65536);
  // A queue must hold at least one report of the largest instance.
  CheckRange(found, "limits.max_queue_bytes", l.max_queue_bytes, 1 << 20, 4 * kGiB);
  CheckRange(found, "limits.max_control_frames", l.max_control_frames, 4, 65536);
  CheckRange(found, "limits.max_queued_bytes_total", l.max_queued_bytes_total, 1 << 20, 64 * kGiB);
  CheckDuration(found, "limits.subscribe_interval", l.subscribe_interval, Nanos::zero(),
                kMaxTimeout);
  CheckRange(found, "limits.max_tag_filter_bytes", l.max_tag_filter_bytes, 1, 65536);
  CheckRange(found, "limits.filter_compiles_per_second", l.filter_compiles_per_second, 1, 100000);
  CheckRange(found, "limits.max_scrapes", l.max_scrapes, 1, 1024);
  CheckRange(found, "limits.metrics_max_connections", l.metrics_max_connections, 1, 100000);
  CheckRange(found, "limits.metrics_max_pending", l.metrics_max_pending, 1, 100000);
  CheckDuration(found, "limits.metrics_request_timeout", l.metrics_request_timeout, kMinTimeout,
                kMaxTimeout);
  CheckDuration(found, "limits.metrics_idle_timeout", l.metrics_idle_timeout, kMinTimeout,
                kMaxTimeout);
  CheckDuration(found, "limits.metrics_connection_lifetime", l.metrics_connection_lifetime,
                kMinTimeout, kMaxIdleTimeout);
  CheckRange(found, "limits.metrics_max_requests", l.metrics_max_requests, 1, 1000000);
  CheckRange(found, "limits.max_history_bytes", l.max_history_bytes, 1 << 20, 1024 * kGiB);
  CheckRange(found, "limits.sysfs_max_open_files", l.sysfs_max_open_files, 0, 1 << 20);
  CheckRange(found, "limits.neuron_monitor_max_line_bytes", l.neuron_monitor_max_line_bytes,
             64 << 10, 64 << 20);
}

void CheckValues(const DaemonConfig& c, Found* found) {
  CheckSampling(c, found);
  CheckListeners(c, found);
  CheckLimits(c.limits, found);
  CheckRecorder(c.recorder, found);
  CheckIncidents(c.incidents, found);
}

// Appends `found` to `problems` as "SOURCE: FIELD: what"; the first becomes the Status.
Status Publish(const Found& found, const std::string& source, std::vector<std::string>* problems) {
  if (found.empty()) return Status::Ok();
  for (const std::string& p : found) {
    if (problems != nullptr) problems->push_back(source + ": " + p);
  }
  return Status::InvalidArgument(source + ": " + found.front());
}

// ---- Addresses.

// Why `host` (no brackets) is not an IPv4 address or a host name; empty when it is one.
std::string HostProblem(std::string_view host) {
  const std::string h(host);
  if (h.find_first_not_of("0123456789.") == std::string::npos) {
    in_addr v4;
    return inet_pton(AF_INET, h.c_str(), &v4) == 1 ? "" : "not a valid IPv4 address";
  }
  bool ok = h.size() <= 253;
  std::size_t start = 0;
  while (ok && start <= h.size()) {
    std::size_t end = h.find('.', start);
    if (end == std::string::npos) end = h.size();
    const std::string_view label = host.substr(start, end - start);
    ok = !label.empty() && label.size() <= 63 && label.front() != '-' && label.back() != '-' &&
         label.find_first_not_of(kHostNameChars) == std::string_view::npos;
    start = end + 1;
  }
  return ok ? "" : "not a valid host name";
}

std::optional<std::uint16_t> ParsePort(std::string_view text) {
  unsigned value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  if (value < 1 || value > 65535) return std::nullopt;
  return static_cast<std::uint16_t>(value);
}

// Splits "[v6]:port" or "host:port"; the error text is what is wrong, without the quote.
Result<std::pair<std::string_view, std::string_view>> SplitHostPort(std::string_view text) {
  std::string_view host;
  std::string_view rest;
  if (text.front() == '[') {
    const std::size_t close = text.find(']');
    if (close == std::string_view::npos) return Status::InvalidArgument("missing \"]\"");
    host = text.substr(1, close - 1);
    rest = text.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') {
      return Status::InvalidArgument("expected \":PORT\" after \"]\"");
    }
  } else {
    const std::size_t colon = text.rfind(':');
    host = text.substr(0, colon == std::string_view::npos ? text.size() : colon);
    if (host.find(':') != std::string_view::npos) {
      return Status::InvalidArgument("put an IPv6 address in brackets, e.g. \"[::1]:9413\"");
    }
    rest = colon == std::string_view::npos ? "" : text.substr(colon);
  }
  if (rest.size() <= 1) return Status::InvalidArgument(kMissingPort);
  return std::pair(host, rest.substr(1));
}

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};

Result<std::string> ReadConfigText(const std::string& path) {
  errno = 0;
  const std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (file == nullptr) {
    const int error = errno;
    std::string message = path + ": cannot open: " + std::strerror(error);
    if (error == ENOENT) return Status::NotFound(std::move(message));
    return Status::IoError(std::move(message));
  }
  // One byte more than the limit tells "exactly 1 MiB" from "larger".
  std::string text(kMaxConfigBytes + 1, '\0');
  const std::size_t size = std::fread(text.data(), 1, text.size(), file.get());
  if (std::ferror(file.get())) {
    return Status::IoError(path + ": cannot read: " + std::strerror(errno));
  }
  if (size > kMaxConfigBytes) return Status::InvalidArgument(path + ": file larger than 1 MiB");
  text.resize(size);
  return text;
}

}  // namespace

// Generated at build time from packaging/neuron-monitord.json (default_config_text.cc).
extern const char kDefaultConfigText[];

DaemonConfig DefaultConfig() { return DaemonConfig{}; }

namespace {

std::string InStateDirectory(const char* name) {
  std::string state = DefaultStateDirectory();
  return state.empty() ? state : state + "/" + name;
}

}  // namespace

std::string DefaultArchiveDirectory() { return InStateDirectory("archive"); }
std::string DefaultIncidentDirectory() { return InStateDirectory("incidents"); }

std::string DefaultConfigText() { return kDefaultConfigText; }

Result<DaemonConfig> ParseConfig(std::string_view text, const std::string& source,
                                 std::vector<std::string>* problems) {
  Result<nlohmann::json> json = ParseJsonWithComments(text, source);
  if (!json.ok()) {
    if (problems != nullptr) problems->push_back(json.status().message());
    return json.status();
  }
  Found found;
  DaemonConfig config = ReadConfig(*json, &found);
  CheckValues(config, &found);
  if (Status status = Publish(found, source, problems); !status.ok()) return status;
  return config;
}

Result<DaemonConfig> LoadConfigFile(const std::string& path, std::vector<std::string>* problems) {
  Result<std::string> text = ReadConfigText(path);
  if (!text.ok()) {
    if (problems != nullptr) problems->push_back(text.status().message());
    return text.status();
  }
  return ParseConfig(*text, path, problems);
}

Status ValidateConfig(const DaemonConfig& config, std::vector<std::string>* problems,
                      const std::string& source) {
  Found found;
  CheckValues(config, &found);
  return Publish(found, source, problems);
}

Result<ListenAddress> ParseListenAddress(std::string_view text) {
  const auto fail = [text](std::string_view what) {
    return Status::InvalidArgument("\"" + std::string(text) + "\": " + std::string(what));
  };
  if (text.empty()) return fail("empty (use HOST:PORT, e.g. \"127.0.0.1:9413\")");
  Result<std::pair<std::string_view, std::string_view>> split = SplitHostPort(text);
  if (!split.ok()) return fail(split.status().message());
  const auto [host, port_text] = *split;
  if (text.front() == '[') {
    in6_addr v6;
    if (inet_pton(AF_INET6, std::string(host).c_str(), &v6) != 1) {
      return fail("not a valid IPv6 address");
    }
  } else if (host.empty()) {
    return fail("missing host (e.g. 0.0.0.0 for every interface)");
  } else if (std::string problem = HostProblem(host); !problem.empty()) {
    return fail(problem);
  }
  const std::optional<std::uint16_t> port = ParsePort(port_text);
  if (!port.has_value()) return fail("port must be a number from 1 to 65535");
  return ListenAddress{std::string(host), *port};
}

std::string FormatListenAddress(const ListenAddress& address) {
  const bool v6 = address.host.find(':') != std::string::npos;
  return (v6 ? "[" + address.host + "]" : address.host) + ":" + std::to_string(address.port);
}

bool LoopbackTcpRequiresToken(const DaemonConfig& config) {
  const UnixListenerConfig& u = config.listeners.unix_socket;
  return !(u.enabled && (u.mode & 0002) != 0);  // connecting to a unix socket needs write access
}

bool TcpRequiresToken(const DaemonConfig& config) {
  if (!config.listeners.tcp) return false;
  return !IsLoopback(*config.listeners.tcp) || LoopbackTcpRequiresToken(config);
}

bool IsLoopback(const ListenAddress& address) {
  std::string host = address.host;
  for (char& ch : host) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (host == "localhost") return true;
  in_addr v4;
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6;
  if (inet_pton(AF_INET6, host.c_str(), &v6) != 1) return false;
  if (std::memcmp(&v6, &in6addr_loopback, sizeof v6) == 0) return true;
  const unsigned char* b = v6.s6_addr;  // ::ffff:127.x.y.z is IPv4 loopback in IPv6 clothes
  return std::all_of(b, b + 10, [](unsigned char x) { return x == 0; }) && b[10] == 0xff &&
         b[11] == 0xff && b[12] == 127;
}

std::string LogLevelName(LogLevel level) {
  for (const auto& [value, name] : kLogLevels) {
    if (value == level) return name;
  }
  return "info";
}

Result<LogLevel> ParseLogLevel(std::string_view name) {
  for (const auto& [value, level_name] : kLogLevels) {
    if (name == level_name) return value;
  }
  return Status::InvalidArgument("\"" + std::string(name) +
                                 "\" is not one of error, warn, info, debug");
}

Result<int> ParseFileMode(std::string_view text) {
  const auto fail = [text](std::string_view what) {
    return Status::InvalidArgument("\"" + std::string(text) + "\": " + std::string(what));
  };
  if (text.empty() || text.size() > 4 || text.find_first_not_of("01234567") != text.npos) {
    return fail("not an octal mode (use e.g. \"0660\")");
  }
  int mode = 0;
  for (char digit : text) mode = mode * 8 + (digit - '0');
  if (mode > 0777) return fail("must be 0000 to 0777");
  return mode;
}

std::string FormatFileMode(int mode) {
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, "%04o", static_cast<unsigned>(mode));
  return buffer;
}

std::string ConfigToJson(const DaemonConfig& c) {
  using nlohmann::ordered_json;
  const auto duration = [](Nanos d) { return FormatDuration(std::max(d, Nanos::zero())); };
  const auto address = [](const std::optional<ListenAddress>& a) {
    return ordered_json{{"address", a ? FormatListenAddress(*a) : ""}};
  };
  const LimitsConfig& l = c.limits;
  const ordered_json limits = {
      {"max_clients", l.max_clients},
      {"max_clients_per_uid", l.max_clients_per_uid},
      {"max_handshaking", l.max_handshaking},
      {"handshake_timeout", duration(l.handshake_timeout)},
      {"subscribe_timeout", duration(l.subscribe_timeout)},
      {"write_timeout", duration(l.write_timeout)},
      {"idle_timeout", duration(l.idle_timeout)},
      {"heartbeat_interval", duration(l.heartbeat_interval)},
      {"queue_depth", l.queue_depth},
      {"max_queue_bytes", l.max_queue_bytes},
      {"max_control_frames", l.max_control_frames},
      {"max_queued_bytes_total", l.max_queued_bytes_total},
      {"subscribe_interval", duration(l.subscribe_interval)},
      {"max_tag_filter_bytes", l.max_tag_filter_bytes},
      {"filter_compiles_per_second", l.filter_compiles_per_second},
      {"max_scrapes", l.max_scrapes},
      {"metrics_max_connections", l.metrics_max_connections},
      {"metrics_max_pending", l.metrics_max_pending},
      {"metrics_request_timeout", duration(l.metrics_request_timeout)},
      {"metrics_idle_timeout", duration(l.metrics_idle_timeout)},
      {"metrics_connection_lifetime", duration(l.metrics_connection_lifetime)},
      {"metrics_max_requests", l.metrics_max_requests},
      {"max_history_bytes", l.max_history_bytes},
      {"sysfs_max_open_files", l.sysfs_max_open_files},
      {"neuron_monitor_max_line_bytes", l.neuron_monitor_max_line_bytes}};
  const UnixListenerConfig& u = c.listeners.unix_socket;
  const IncidentsConfig& i = c.incidents;
  const ordered_json json = {{"device", c.device},
                             {"sysfs_root", c.sysfs_root},
                             {"proc_root", c.proc_root},
                             {"neuron_monitor", c.neuron_monitor},
                             {"kubernetes",
                              {{"enabled", c.kubernetes.enabled},
                               {"pod_resources_socket", c.kubernetes.pod_resources_socket}}},
                             {"kernel_log",
                              {{"enabled", c.kernel_log.enabled},
                               {"path", c.kernel_log.path},
                               {"max_records_per_read", c.kernel_log.max_records_per_read}}},
                             {"scenario", c.scenario},
                             {"seed", c.seed},
                             {"node", c.node},
                             {"nodes", c.nodes},
                             {"period", duration(c.period)},
                             {"speed", c.speed},
                             {"history_retention", duration(c.history_retention)},
                             {"listeners",
                              {{"unix",
                                {{"enabled", u.enabled},
                                 {"path", u.path},
                                 {"mode", FormatFileMode(u.mode)},
                                 {"group", u.group}}},
                               {"tcp", address(c.listeners.tcp)},
                               {"metrics", address(c.listeners.metrics)}}},
                             {"auth_token_file", c.auth_token_file},
                             {"limits", limits},
                             {"recorder",
                              {{"enabled", c.recorder.enabled},
                               {"directory", c.recorder.directory},
                               {"max_bytes", c.recorder.max_bytes},
                               {"retention", duration(c.recorder.retention)},
                               {"segment", duration(c.recorder.segment)}}},
                             {"incidents",
                              {{"enabled", i.enabled},
                               {"directory", i.directory},
                               {"hold", duration(i.hold)},
                               {"hold_errors", duration(i.hold_errors)},
                               {"before", duration(i.before)},
                               {"after", duration(i.after)},
                               {"max_count", i.max_count},
                               {"max_bytes", i.max_bytes}}},
                             {"log_level", LogLevelName(c.log_level)}};
  return json.dump(2);
}

}  // namespace neuronmon::daemon
