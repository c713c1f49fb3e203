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

#include "daemon/core/metrics/exposition.h"
#include "daemon/core/metrics/metrics_input.h"
#include "daemon/core/metrics/prometheus_histogram.h"
#include "daemon/core/report/history.h"
#include "proto/common/snapshot.h"

namespace neuronmon::daemon {

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

}  // namespace neuronmon::daemon
