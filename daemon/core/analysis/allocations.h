// Internals of the Analyzer (analyzer.h): allocated versus used, where the kubelet's allocations
// are known (Inventory.allocations) — a runtime using devices no pod was allocated gets an
// `unallocated` finding after its verdict; each pod container whose allocated devices no runtime
// uses gets an idle_allocated finding of its own (Analysis::allocations). Not part of the
// daemon's API. Pure; thread-safe.
#pragma once

#include <cstdint>

#include "daemon/core/analysis/analysis.h"
#include "neuronmon/v1/inventory.pb.h"
#include "proto/common/snapshot.h"

namespace neuronmon::daemon::analysis_internal {

// Adds the allocation findings of the newest snapshot `end` to `out`, since `now_ns` — or since
// `previous` (the last analysis) held a finding of the same kind and subject. Nothing when the
// allocations are not known.
void AddAllocationFindings(const v1::Inventory& inv, const Snapshot& end, std::int64_t now_ns,
                           const Analysis& previous, Analysis& out);

}  // namespace neuronmon::daemon::analysis_internal
