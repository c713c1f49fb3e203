// Report builder: turns snapshots into a v1::Report. Each due group has its own window, from its
// start snapshot to the report's end snapshot: utilization = Δbusy/Δt, FLOP/s and bandwidth =
// Δcount/Δt, latency percentiles from the Δhistogram, per-window counts, and the cumulative
// counters at the end. A counter that went backwards (a device reset: a new counter epoch) starts a
// new baseline — the window counts from zero and the report says counters_reset — never a negative
// rate. Periods are measured on the device's clock. Pure; thread-safe.
#pragma once

#include <vector>

#include "daemon/core/report/subscription.h"
#include "neuronmon/v1/envelope.pb.h"
#include "neuronmon/v1/inventory.pb.h"
#include "proto/common/snapshot.h"

namespace neuronmon::daemon {

struct GroupWindow {
  v1::Group group = v1::GROUP_UNSPECIFIED;
  const Snapshot* start = nullptr;  // REQUIRES: not null; may equal the end snapshot
};

struct ReportInput {
  const v1::Inventory* inventory = nullptr;    // REQUIRES: not null
  const Snapshot* end = nullptr;               // REQUIRES: not null
  std::vector<GroupWindow> groups;             // the groups due in this report
  const Subscription* subscription = nullptr;  // tag filter; null: every runtime
  bool replay = false;
};

v1::Report BuildReport(const ReportInput& input);

// Percentiles of a window's histogram; false when it is empty.
bool FillPercentiles(const LatencyHistogram& h, v1::Percentiles* out);

// Cumulative counters of `s`, as Report.totals carries them.
void FillTotals(const Snapshot& s, v1::Totals* out);

}  // namespace neuronmon::daemon
