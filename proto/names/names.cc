#include "proto/names/names.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace neuronmon {
namespace {

// "namespace/pod", or the pod alone when its namespace is unknown: kubectl's way.
std::string QualifiedPod(const std::string& pod_namespace, const std::string& pod) {
  return pod_namespace.empty() ? pod : pod_namespace + "/" + pod;
}

std::string ContainerClause(const std::string& container) {
  return container.empty() ? "" : " (container " + container + ")";
}

}  // namespace

const char* EventKindName(v1::EventKind kind) {
  switch (kind) {
    case v1::EVENT_KIND_VERDICT:
      return "verdict";
    case v1::EVENT_KIND_DEVICE_HEALTH:
      return "device_health";
    case v1::EVENT_KIND_HARDWARE_ERROR:
      return "hardware_error";
    case v1::EVENT_KIND_INCIDENT:
      return "incident";
    case v1::EVENT_KIND_DAEMON:
      return "daemon";
    case v1::EVENT_KIND_JOB:
      return "job";
    default:
      return "unspecified";
  }
}

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
    case v1::FINDING_KIND_MEMORY_PRESSURE:
      return "memory_pressure";
    case v1::FINDING_KIND_UNALLOCATED:
      return "unallocated";
    default:
      return "unspecified";
  }
}

int VerdictRank(v1::FindingKind kind) {
  switch (kind) {
    case v1::FINDING_KIND_HANG:
      return 7;
    case v1::FINDING_KIND_ERRORS:
      return 6;
    case v1::FINDING_KIND_MEMORY_PRESSURE:
      return 5;
    case v1::FINDING_KIND_STRAGGLER:
      return 4;
    case v1::FINDING_KIND_COLLECTIVE_BOUND:
    case v1::FINDING_KIND_HBM_BOUND:
    case v1::FINDING_KIND_INPUT_BOUND:
    case v1::FINDING_KIND_IDLE_ALLOCATED:
    case v1::FINDING_KIND_UNALLOCATED:
      return 2;
    case v1::FINDING_KIND_HEALTHY:
      return 1;
    default:
      return 0;
  }
}

std::string JobOf(const v1::Attribution& a) {
  if (!a.slurm_job_id().empty()) {
    // An array task is known by its array job and task, as squeue shows it.
    if (a.slurm_array_task_id().empty()) return a.slurm_job_id();
    const std::string& array =
        a.slurm_array_job_id().empty() ? a.slurm_job_id() : a.slurm_array_job_id();
    return array + "_" + a.slurm_array_task_id();
  }
  if (!a.pod().empty()) return QualifiedPod(a.namespace_(), a.pod());
  if (!a.container_id().empty()) return a.container_id().substr(0, 12);
  return "";
}

std::string PodLabel(const v1::Attribution& attribution) {
  return "pod " + QualifiedPod(attribution.namespace_(), attribution.pod());
}

std::string PodLabel(const v1::PodAllocation& allocation) {
  return "pod " + QualifiedPod(allocation.namespace_(), allocation.pod());
}

std::string PodLabelWithContainer(const v1::Attribution& attribution) {
  return PodLabel(attribution) + ContainerClause(attribution.container());
}

std::string PodLabelWithContainer(const v1::PodAllocation& allocation) {
  return PodLabel(allocation) + ContainerClause(allocation.container());
}

const char* HealthStateName(v1::HealthState state) {
  switch (state) {
    case v1::HEALTH_STATE_OK:
      return "ok";
    case v1::HEALTH_STATE_DEGRADED:
      return "degraded";
    case v1::HEALTH_STATE_FAILED:
      return "failed";
    default:
      return "unspecified";
  }
}

const char* HealthActionName(v1::HealthAction action) {
  switch (action) {
    case v1::HEALTH_ACTION_WATCH:
      return "watch";
    case v1::HEALTH_ACTION_DRAIN:
      return "drain";
    case v1::HEALTH_ACTION_RESET:
      return "reset";
    case v1::HEALTH_ACTION_REPLACE:
      return "replace";
    default:
      return "none";
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
  const int k = static_cast<int>(op) - 1;  // v1::CollectiveOp is CollectiveKind plus one
  return k >= 0 && k < kCollectiveKinds ? kCollectiveKindNames[static_cast<std::size_t>(k)].data()
                                        : "unspecified";
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
    case Signal::kFlops:
      return "flops";
  }
  return "unspecified";
}

const std::array<v1::Group, 14>& AllGroups() {
  static const std::array<v1::Group, 14> all = {v1::GROUP_NEURONCORE_COUNTERS,
                                                v1::GROUP_MEMORY_USED,
                                                v1::GROUP_NEURON_RUNTIME_VCPU_USAGE,
                                                v1::GROUP_EXECUTION_STATS,
                                                v1::GROUP_COLLECTIVES_STATS,
                                                v1::GROUP_BOTTLENECK_ANALYSIS,
                                                v1::GROUP_VCPU_USAGE,
                                                v1::GROUP_MEMORY_INFO,
                                                v1::GROUP_NEURON_HW_COUNTERS,
                                                v1::GROUP_HBM_STATS,
                                                v1::GROUP_DEVICE_HEALTH,
                                                v1::GROUP_TOTALS,
                                                v1::GROUP_HOST_SUMMARY,
                                                v1::GROUP_JOBS};
  return all;
}

bool IsNamedOnlyGroup(v1::Group group) {
  return group == v1::GROUP_HOST_SUMMARY || group == v1::GROUP_JOBS;
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
    case v1::GROUP_DEVICE_HEALTH:
      return "device_health";
    case v1::GROUP_TOTALS:
      return "totals";
    case v1::GROUP_HOST_SUMMARY:
      return "host_summary";
    case v1::GROUP_JOBS:
      return "jobs";
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

void AddEvidence(v1::Event& e, std::string_view name, double value, const char* unit) {
  v1::Evidence* ev = e.add_evidence();
  ev->set_name(std::string(name));
  ev->set_value(value);
  ev->set_unit(unit);
}

std::string StuckRankClause(const v1::HangDetail& hang) {
  char seconds[64];
  std::snprintf(seconds, sizeof seconds, " for %.0f s", std::floor(hang.stuck_seconds()));
  return hang.stuck_rank() + " has not joined " + CollectiveOpName(hang.operation()) + seconds;
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
