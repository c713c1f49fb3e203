// MetricsInput: what BuildMetrics (prometheus.h) reads for one scrape — the snapshots, the
// inventory, the daemon's own counters and the analyzer's findings — borrowed for the call only.
// Plain values; thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "daemon/core/jobs/job_book.h"
#include "daemon/core/stats.h"
#include "neuronmon/v1/inventory.pb.h"
#include "neuronmon/v1/report.pb.h"
#include "proto/common/snapshot.h"
#include "proto/procfs/proc_parsers.h"

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
  const DaemonStats* stats = nullptr;    // neuron_monitord_* stream and sampler metrics
  const ScrapeStats* scrapes = nullptr;  // neuron_monitord_http_responses_total
  const Result<procfs::ProcessMetrics>* process =
      nullptr;                              // process_*; an error: group "process" fails
  const FindingsByPid* findings = nullptr;  // neuron_finding*; null: no analyzer yet
  const JobBook* jobs = nullptr;            // neuron_job_* of the live jobs; null: none
  std::string version;                      // neuron_monitord_build_info{version}
  Nanos period{0};                          // base sampling period; 0: not shown
};

}  // namespace neuronmon::daemon
