// Internals of BuildMetrics (prometheus.h), shared by its two .cc files: a builder for one family
// and one function per neuron-monitor group. Each group function adds its families to the
// exposition and returns whether the group was read in full — false when part of its data could
// not be read (an error string in the snapshot) or the writer refused one of its families, whose
// reason is appended to `problems`. Not part of the daemon's API. Pure; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "daemon/core/metrics/exposition.h"
#include "daemon/core/metrics/metrics_input.h"

namespace neuronmon::daemon::metrics_internal {

// Collects the samples of one family; AddTo appends it when it has any.
class FamilyBuilder {
 public:
  FamilyBuilder(std::string name, std::string help, MetricType type,
                std::optional<std::string> unit = std::nullopt);

  void Add(std::vector<Label> labels, double value);
  void AddHistogram(std::vector<Label> labels, HistogramValue histogram);
  // True when the family was added or had no samples.
  bool AddTo(Exposition& exposition, std::vector<std::string>& problems);

 private:
  MetricFamily family_;
};

// What every group function reads and writes.
struct GroupContext {
  const MetricsInput& in;
  const v1::Report& window;     // BuildReport over [start, end] (start = end without a window)
  bool has_window = false;      // false: ratio and percentile gauges are left out
  std::vector<Label> instance;  // AWS's instance labels, sorted by name
  std::vector<std::string> runtime_tags;           // label value of each runtime of `in.end`
  std::vector<std::vector<Label>> runtime_labels;  // `instance` plus each runtime's runtime_tag
  // Each runtime's process in the inventory (null: none there), by the index of `in.end`.
  std::vector<const v1::Process*> runtime_processes;
  Exposition& out;
  std::vector<std::string>& problems;
};

// `base` (sorted by name) plus `extra`, sorted by label name as neuron-monitor-prometheus.py
// prints them.
std::vector<Label> WithLabels(const std::vector<Label>& base, std::initializer_list<Label> extra);

// AWS's instance labels (availability_zone, instance_id, instance_name, instance_type, region,
// subnet_id, and ultraserver_id when set), sorted by name.
std::vector<Label> InstanceLabels(const v1::InstanceInfo& info);

// Runtime tags made unique: a tag that an earlier runtime already uses gets " (pid N)" appended,
// so two processes with one NEURON_PROCESS_TAG cannot collide into one series.
std::vector<std::string> UniqueRuntimeTags(const std::vector<RuntimeSample>& runtimes);

// Runtime groups (REQUIRES: c.in.end not null).
bool AddNeuronCoreCounters(const GroupContext& c);
bool AddMemoryUsed(const GroupContext& c);
bool AddRuntimeVcpuUsage(const GroupContext& c);
bool AddExecutionStats(const GroupContext& c);
bool AddCollectivesStats(const GroupContext& c);

// System groups (REQUIRES: c.in.end not null).
bool AddHwCounters(const GroupContext& c);
bool AddHbmStats(const GroupContext& c);
// neuron_device_health (a state set: ok, degraded, failed), its reasons, power and hardware
// error counters.
bool AddDeviceHealth(const GroupContext& c);
bool AddVcpuUsage(const GroupContext& c);
bool AddMemoryInfo(const GroupContext& c);
// instance_info and neuron_hardware_info.
bool AddInventoryInfo(const GroupContext& c);
// neuron_unavailable_signal_info{signal, reason}: one series per signal the backend cannot
// measure at `c.in.end` (none from the simulator).
bool AddUnavailableSignals(const GroupContext& c);

}  // namespace neuronmon::daemon::metrics_internal
