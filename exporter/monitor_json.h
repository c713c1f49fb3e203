// MonitorState and RenderMonitorJson: the document AWS's neuron-monitor prints, one per line —
// `neuron_runtime_data`, `system_data`, `instance_info`, `neuron_hardware_info` — with AWS's key
// names, key order, units and Go number style (reference neuron-tools.md §1.5–1.7), plus our
// additive groups (runtime `collectives_stats` and `bottleneck_analysis`, system `hbm_stats`,
// `device_health` and the instance-level `bottleneck_analysis`; docs/json-schema.md describes
// them).
//
// Reports carry only the groups due in their window; MonitorState keeps every group's last value
// (and its last period, through client::ReportAccumulator) so each printed document is complete,
// as neuron-monitor's is. The state owns copies of everything it was given. Rendering is pure and
// streams straight into the output string (no intermediate DOM). Not thread-safe: one owner.
#pragma once

#include <google/protobuf/repeated_ptr_field.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "client/report_accumulator.h"
#include "exporter/render_options.h"
#include "neuronmon/v1/inventory.pb.h"
#include "neuronmon/v1/report.pb.h"

namespace neuronmon::exporter {

class MonitorState {
 public:
  // At most this many subscriptions (see Apply's `source`).
  static constexpr std::size_t kMaxSources = client::ReportAccumulator::kMaxSources;

  // One Neuron application (each group's last value) and the system groups with the instance's
  // bottleneck_analysis, as the accumulator merged them; repeated fields are kept in document
  // order (map keys sorted as strings), so rendering never sorts.
  using Runtime = client::ReportAccumulator::Runtime;
  using System = client::ReportAccumulator::System;

  // Replaces instance_info and neuron_hardware_info. Until called, both print empty values.
  void SetInventory(const v1::Inventory& inventory);

  // Merges `report` by the accumulator's rules (client/report_accumulator.h). `source` tells
  // reports of different subscriptions apart (a neuron-monitor config with several
  // `neuron_runtimes` selectors subscribes once per selector). REQUIRES: source < kMaxSources.
  void Apply(const v1::Report& report, std::size_t source = 0);

  // True once at least one report was applied.
  bool has_data() const { return merged_.reports() > 0; }

  const v1::Inventory& inventory() const { return inventory_; }
  // Ascending pid.
  const std::vector<Runtime>& runtimes() const { return merged_.runtimes(); }
  const System& system() const { return merged_.system(); }

 private:
  v1::Inventory inventory_;
  client::ReportAccumulator merged_;
};

// One complete document, compact, no trailing newline.
std::string RenderMonitorJson(const MonitorState& state, const RenderOptions& options = {});

// Appends the document to `out` (reuse one string across documents to avoid reallocating).
void AppendMonitorJson(const MonitorState& state, const RenderOptions& options, std::string& out);

}  // namespace neuronmon::exporter
