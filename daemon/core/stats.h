// DaemonStats: the daemon's own counters, kept for /metrics (neuron_monitord_*) and STATUS= lines.
// Plain values updated by the io_context thread that owns them. Not thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace neuronmon::daemon {

enum class Transport { kUnix, kTcp, kEmbedded };
inline constexpr int kTransports = 3;
const char* TransportName(Transport t);  // "unix", "tcp", "embedded"

// What a real host's sources left out or refused (absent for the simulator and a replay).
struct SourceStats {
  // The kernel log, when it is read: records carrying NEURON_HW_ERR that were not events (another
  // facility or level, free text, outside the grammar: what a forger writes), and events naming
  // no device or one at or past device 128 (KernelLogOptions::max_devices).
  std::optional<std::uint64_t> kernel_log_refused;
  std::optional<std::uint64_t> kernel_log_unattributed;
  // The last complete process scan: processes not examined, or not fully, by reason
  // ("unreadable", "omitted", "fd_limited", "uid_limited").
  std::map<std::string, std::uint64_t> processes_unexamined;
  // neuron-monitor's runtimes left out beyond processes.max_runtimes (absent without it).
  std::optional<std::uint64_t> runtimes_dropped;
  // Core readings whose nc_time_in_use grew by more than the interval, clamped to 100 %.
  std::optional<std::uint64_t> busy_readings_clamped;
  bool operator==(const SourceStats&) const = default;
};

struct DaemonStats {
  std::array<std::uint64_t, kTransports> clients{};  // connected now
  std::uint64_t connections_total = 0;
  std::uint64_t frames_sent = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t frames_dropped = 0;                  // reports dropped for slow clients
  std::map<std::string, std::uint64_t> disconnects;  // by reason: "closed", "slow", "protocol", ...
  std::uint64_t missed_ticks = 0;
  std::uint64_t samples = 0;
  // Snapshots dropped from the history to keep within limits.max_history_bytes.
  std::uint64_t history_evicted = 0;
  std::optional<SourceStats> sources;  // a real host's
  double last_sample_seconds = 0;      // how long the last sample took
  double sample_seconds_total = 0;     // summed
  double last_sample_unix = 0;         // wall time of the last sample
  double read_pending_seconds = 0;     // how long the read in flight has run, once past a period
  std::uint64_t reloads = 0;
  std::uint64_t reload_failures = 0;
  // The archive (recorder); the rest are meaningful only when enabled.
  bool recorder_enabled = false;
  bool recorder_active = false;  // the last snapshot was written
  std::uint64_t recorder_snapshots = 0;
  std::uint64_t recorder_bytes_written = 0;
  std::uint64_t recorder_archive_bytes = 0;
  std::uint64_t recorder_failures = 0;
  std::uint64_t recorder_dropped = 0;
  // Incident bundles (config incidents).
  bool incidents_enabled = false;
  std::uint64_t incidents_saved = 0;
  std::uint64_t incident_failures = 0;  // bundles that could not be written
};

}  // namespace neuronmon::daemon
