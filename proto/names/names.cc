#include "proto/names/names.h"

#include <algorithm>

namespace neuronmon {

const char* FindingKindName(v1::FindingKind kind) {
  switch (kind) {
    case v1::FINDING_KIND_HEALTHY:
      return "healthy";
    case v1::FINDING_KIND_INPUT_BOUND:
      return "input_bound";
    case v1::FINDING_KIND_COLLECTIVE_BOUND:
      return "collective_bound";
    case v1::FINDING_KIND_HBM_BOUND:
      return "hbm_bound";
    case v1::FINDING_KIND_STRAGGLER:
      return "straggler";
    case v1::FINDING_KIND_IDLE_ALLOCATED:
      return "idle_allocated";
    case v1::FINDING_KIND_ERRORS:
      return "errors";
    case v1::FINDING_KIND_HANG:
      return "hang";
    default:
      return "unspecified";
  }
}

const char* SeverityName(v1::Severity severity) {
  switch (severity) {
    case v1::SEVERITY_INFO:
      return "info";
    case v1::SEVERITY_WARNING:
      return "warning";
    case v1::SEVERITY_CRITICAL:
      return "critical";
    default:
      return "unspecified";
  }
}

const char* CollectiveOpName(v1::CollectiveOp op) {
  switch (op) {
    case v1::COLLECTIVE_OP_ALL_REDUCE:
      return "all_reduce";
    case v1::COLLECTIVE_OP_ALL_GATHER:
      return "all_gather";
    case v1::COLLECTIVE_OP_REDUCE_SCATTER:
      return "reduce_scatter";
    case v1::COLLECTIVE_OP_ALL_TO_ALL:
      return "all_to_all";
    case v1::COLLECTIVE_OP_SEND_RECV:
      return "send_recv";
    default:
      return "unspecified";
  }
}

const char* SignalName(Signal signal) {
  switch (signal) {
    case Signal::kHbmTraffic:
      return "hbm_traffic";
    case Signal::kEccCorrected:
      return "ecc_corrected";
    case Signal::kCoreActivity:
      return "core_activity";
    case Signal::kExecutions:
      return "executions";
    case Signal::kLatency:
      return "latency";
    case Signal::kRuntimeCpu:
      return "runtime_cpu";
    case Signal::kCollectives:
      return "collectives";
  }
  return "unspecified";
}

const std::array<v1::Group, 12>& AllGroups() {
  static const std::array<v1::Group, 12> all = {v1::GROUP_NEURONCORE_COUNTERS,
                                                v1::GROUP_MEMORY_USED,
                                                v1::GROUP_NEURON_RUNTIME_VCPU_USAGE,
                                                v1::GROUP_EXECUTION_STATS,
                                                v1::GROUP_COLLECTIVES_STATS,
                                                v1::GROUP_BOTTLENECK_ANALYSIS,
                                                v1::GROUP_VCPU_USAGE,
                                                v1::GROUP_MEMORY_INFO,
                                                v1::GROUP_NEURON_HW_COUNTERS,
                                                v1::GROUP_HBM_STATS,
                                                v1::GROUP_TOTALS,
                                                v1::GROUP_HOST_SUMMARY};
  return all;
}

bool IsRuntimeGroup(v1::Group group) {
  return group >= v1::GROUP_NEURONCORE_COUNTERS && group <= v1::GROUP_BOTTLENECK_ANALYSIS;
}

const char* GroupName(v1::Group group) {
  switch (group) {
    case v1::GROUP_NEURONCORE_COUNTERS:
      return "neuroncore_counters";
    case v1::GROUP_MEMORY_USED:
      return "memory_used";
    case v1::GROUP_NEURON_RUNTIME_VCPU_USAGE:
      return "neuron_runtime_vcpu_usage";
    case v1::GROUP_EXECUTION_STATS:
      return "execution_stats";
    case v1::GROUP_COLLECTIVES_STATS:
      return "collectives_stats";
    case v1::GROUP_BOTTLENECK_ANALYSIS:
      return "bottleneck_analysis";
    case v1::GROUP_VCPU_USAGE:
      return "vcpu_usage";
    case v1::GROUP_MEMORY_INFO:
      return "memory_info";
    case v1::GROUP_NEURON_HW_COUNTERS:
      return "neuron_hw_counters";
    case v1::GROUP_HBM_STATS:
      return "hbm_stats";
    case v1::GROUP_TOTALS:
      return "totals";
    case v1::GROUP_HOST_SUMMARY:
      return "host_summary";
    default:
      return "unknown";
  }
}

void AddEvidence(v1::Finding& f, const char* name, double value, const char* unit, double threshold,
                 const char* comparison) {
  v1::Evidence* e = f.add_evidence();
  e->set_name(name);
  e->set_value(value);
  e->set_unit(unit);
  e->set_threshold(threshold);
  e->set_comparison(comparison);
}

std::uint32_t CoresPerDevice(const v1::Inventory& inventory) {
  return std::max(1u, inventory.hardware_info().neuroncore_per_device_count());
}

double DeviceUtilization(std::span<const double> core_percent, std::uint32_t device,
                         std::uint32_t per) {
  double sum = 0;
  for (std::uint32_t k = 0; k < per; ++k) {
    const std::size_t core = static_cast<std::size_t>(device) * per + k;
    if (core < core_percent.size()) sum += core_percent[core];
  }
  return per == 0 ? 0 : sum / per;
}

v1::CollectiveOp CollectiveOpOf(CollectiveKind kind) {
  return static_cast<v1::CollectiveOp>(static_cast<int>(kind) + 1);  // same order, from 1
}

}  // namespace neuronmon
