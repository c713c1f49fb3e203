// The daemon's Prometheus metrics. BuildMetrics turns what the daemon already holds — the newest
// snapshot (cumulative counters and gauges), an earlier one that bounds the window for ratios and
// percentiles, the inventory, the daemon's own counters, its process metrics and the analyzer's
// findings — into an Exposition (exposition.h) that renders as text 0.0.4 or OpenMetrics.
//
// Every family of AWS's neuron-monitor-prometheus.py keeps its name, type, HELP text, label names
// and units (neuroncore_utilization_ratio, execution_errors_total, ...), so AWS's Grafana
// dashboard works unchanged; device and runtime families carry AWS's instance labels. Counters
// are the snapshot's cumulative counters as they are, never sums of per-window deltas; series of
// runtimes that are not in the newest snapshot (they exited) are absent. New families: HBM
// (neuron_hbm_*), collectives (neuron_collective_*, with a latency histogram), findings
// (neuron_finding*), the daemon's health (neuron_monitord_*) and process_*.
//
// Unavailable is not zero: a signal the backend cannot measure (Snapshot::unmeasured, e.g. HBM
// traffic on a real host) has no series at all — not a 0 — and is listed instead in
// neuron_unavailable_signal_info{signal, reason}; its group still counts as read in full.
//
// Failures are data: a group that could not be read (a lost device, an unreadable /proc/stat, a
// runtime whose device does not answer, the whole device read) loses only its own families and
// shows neuron_monitord_collector_success{group="<neuron-monitor group name>"} 0. The groups are
// named as neuron-monitor's config names them: neuroncore_counters, memory_used,
// neuron_runtime_vcpu_usage, execution_stats, collectives_stats, neuron_hw_counters, hbm_stats,
// vcpu_usage, memory_info, plus bottleneck_analysis (findings) and process (/proc/self).
//
// Pure functions of their arguments; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "daemon/core/exposition.h"
#include "daemon/core/history.h"
#include "daemon/core/proc_parsers.h"
#include "daemon/core/stats.h"
#include "neuronmon/v1/inventory.pb.h"
#include "neuronmon/v1/report.pb.h"
#include "proto/common/snapshot.h"

namespace neuronmon::daemon {

// The analyzer's current findings by runtime pid, as Analysis::runtimes holds them. Findings of a
// pid that is not in the newest snapshot are ignored; of several findings of one kind for a
// runtime, the first is shown.
using FindingsByPid = std::map<std::uint32_t, std::vector<v1::Finding>>;

// The HTTP server's own counters.
struct ScrapeStats {
  std::map<int, std::uint64_t> responses;  // by HTTP status code
};

// Everything BuildMetrics reads; pointers are borrowed for the call only. Null optional inputs
// leave their families out.
struct MetricsInput {
  const v1::Inventory* inventory = nullptr;  // REQUIRES: not null
  // The newest snapshot; null before the first sample (only the daemon's own families then).
  const Snapshot* end = nullptr;
  // The start of the window for ratios and latency percentiles; null or equal to `end` (one
  // snapshot so far): those gauges are absent, counters and memory gauges are not.
  const Snapshot* start = nullptr;
  const DaemonStats* stats = nullptr;               // neuron_monitord_* stream and sampler metrics
  const ScrapeStats* scrapes = nullptr;             // neuron_monitord_http_responses_total
  const Result<ProcessMetrics>* process = nullptr;  // process_*; an error: group "process" fails
  const FindingsByPid* findings = nullptr;          // neuron_finding*; null: no analyzer yet
  std::string version;                              // neuron_monitord_build_info{version}
  Nanos period{0};                                  // base sampling period; 0: not shown
};

// The exposition of one scrape. Never fails: a family the writer refuses (it cannot happen with
// the names used here, but label values come from the device) fails its group instead.
Exposition BuildMetrics(const MetricsInput& input);

struct MetricsWindow {
  const Snapshot* start = nullptr;
  const Snapshot* end = nullptr;
};

// The newest retained snapshot and the one about `window` earlier (at least one sample earlier,
// at most the oldest retained). Both null when the history is empty; start == end when it holds
// one snapshot. Pointers are valid until the history changes. REQUIRES: period > 0.
MetricsWindow SelectWindow(const History& history, Nanos window, Nanos period);

struct SamplingHealth {
  bool healthy = false;
  std::string text;  // "ok", or why not: "no sample yet", "last sample 4.2 s ago (period 1 s)"
};

// Healthy while the newest snapshot is at most 3 periods older than `now` (daemon clock).
SamplingHealth CheckSampling(const History& history, MonoTime now, Nanos period);

// The `le` bounds of neuron_collective_latency_seconds: every octave, 1e-6 * 2^k s, k = 0..24.
std::vector<double> CollectiveLatencyBounds();

// A LatencyHistogram as a Prometheus histogram with `bounds` (ascending) and +Inf: each bound
// counts the buckets whose upper edge is at most the bound. The highest bucket also holds
// everything above ~16.8 s, so it counts only in +Inf: no `le` bucket claims observations it may
// not hold (the lowest bucket, which also holds everything below 1 us, ends at 1.09 us).
HistogramValue ToPrometheusHistogram(const LatencyHistogram& h, const std::vector<double>& bounds);

}  // namespace neuronmon::daemon
