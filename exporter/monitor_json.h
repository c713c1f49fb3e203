// MonitorState and RenderMonitorJson: the document AWS's neuron-monitor prints, one per line —
// `neuron_runtime_data`, `system_data`, `instance_info`, `neuron_hardware_info` — with AWS's key
// names, key order, units and Go number style (reference neuron-tools.md §1.5–1.7), plus our
// additive groups (runtime `collectives_stats` and `bottleneck_analysis`, system `hbm_stats` and
// the instance-level `bottleneck_analysis`; docs/json-schema.md describes them).
//
// Reports carry only the groups due in their window; MonitorState keeps every group's last value
// (and its last period) so each printed document is complete, as neuron-monitor's is. The state
// owns copies of everything it was given. Rendering is pure and streams straight into the output
// string (no intermediate DOM). Not thread-safe: one owner.
#pragma once

#include <google/protobuf/repeated_ptr_field.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "neuronmon/v1/inventory.pb.h"
#include "neuronmon/v1/report.pb.h"

namespace neuronmon::exporter {

class MonitorState {
 public:
  // At most this many subscriptions (see Apply's `source`).
  static constexpr std::size_t kMaxSources = 64;

  // One Neuron application. `report` holds, per group, the last value received: a group message
  // is present (has_…()) once received. Its repeated fields are kept in document order (map keys
  // sorted as strings), so rendering never sorts.
  struct Runtime {
    v1::RuntimeReport report;
    bool has_analysis = false;  // bottleneck_analysis received: report.findings{,_period_ns}
    std::uint64_t sources = 0;  // bit s set: subscription s still reports this runtime
  };

  // The system-level groups, and the instance-level bottleneck_analysis (Report.findings).
  struct System {
    v1::SystemReport groups;  // same presence and ordering rules as Runtime::report
    bool has_analysis = false;
    google::protobuf::RepeatedPtrField<v1::Finding> findings;
    std::uint64_t analysis_period_ns = 0;
  };

  // Replaces instance_info and neuron_hardware_info. Until called, both print empty values.
  void SetInventory(const v1::Inventory& inventory);

  // Merges `report`: every group present replaces the stored one. When the report carries any
  // runtime-level group, runtimes absent from it have exited and are dropped. `source` tells
  // reports of different subscriptions apart (a neuron-monitor config with several
  // `neuron_runtimes` selectors subscribes once per selector): a runtime is dropped only when no
  // subscription reports it any more. REQUIRES: source < kMaxSources.
  //
  // Whether runtime-level groups were due comes from Report.groups; a report without that list
  // (older daemons, hand-made reports) counts as due when it lists runtimes or carries nothing
  // else.
  void Apply(const v1::Report& report, std::size_t source = 0);

  // True once at least one report was applied.
  bool has_data() const { return has_data_; }

  const v1::Inventory& inventory() const { return inventory_; }
  // Ascending pid.
  const std::vector<Runtime>& runtimes() const { return runtimes_; }
  const System& system() const { return system_; }

 private:
  static bool RuntimesWereDue(const v1::Report& report);
  void MergeRuntime(const v1::RuntimeReport& in, std::uint64_t source_bit);
  void DropUnreported(const v1::Report& report, std::uint64_t source_bit);
  void MergeSystem(const v1::Report& report);

  v1::Inventory inventory_;
  std::vector<Runtime> runtimes_;
  System system_;
  bool has_data_ = false;
};

struct RenderOptions {
  // false: only AWS's own groups and keys (no collectives_stats, bottleneck_analysis, hbm_stats).
  bool include_extensions = true;
};

// One complete document, compact, no trailing newline.
std::string RenderMonitorJson(const MonitorState& state, const RenderOptions& options = {});

// Appends the document to `out` (reuse one string across documents to avoid reallocating).
void AppendMonitorJson(const MonitorState& state, const RenderOptions& options, std::string& out);

}  // namespace neuronmon::exporter
