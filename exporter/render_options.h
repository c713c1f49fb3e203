// RenderOptions: how the neuron-monitor document is rendered (exporter/monitor_json.h), read by
// the writers of its groups (exporter/monitor_json_groups.h) too. A plain value.
#pragma once

namespace neuronmon::exporter {

struct RenderOptions {
  // false: only AWS's own groups and keys (no collectives_stats, bottleneck_analysis, hbm_stats).
  bool include_extensions = true;
};

}  // namespace neuronmon::exporter
