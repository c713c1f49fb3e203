#include "daemon/core/metrics/prometheus_families.h"

#include <algorithm>
#include <array>
#include <set>
#include <tuple>
#include <utility>

#include "daemon/core/metrics/prometheus_histogram.h"
#include "proto/names/names.h"
#include "proto/wire/field_codec.h"

namespace neuronmon::daemon::metrics_internal {

using namespace ::neuronmon::procfs;  // NOLINT: the /proc parsers (proto/procfs)
namespace {

constexpr MetricType kGauge = MetricType::kGauge;
constexpr MetricType kCounter = MetricType::kCounter;

double AsDouble(std::uint64_t v) { return static_cast<double>(v); }

std::vector<Label> RuntimeLabels(const GroupContext& c, std::size_t runtime,
                                 std::initializer_list<Label> extra) {
  return WithLabels(c.runtime_labels[runtime], extra);
}

// The runtime's window report; BuildReport keeps the snapshot's runtime order.
const v1::RuntimeReport* WindowOf(const GroupContext& c, std::size_t runtime) {
  return runtime < static_cast<std::size_t>(c.window.runtimes_size())
             ? &c.window.runtimes(static_cast<int>(runtime))
             : nullptr;
}

bool InStart(const GroupContext& c, std::uint32_t pid) {
  return c.in.start != nullptr && FindRuntime(*c.in.start, pid) != nullptr;
}

// Runs `fn(index, runtime)` for each readable runtime; false when one could not be read.
template <typename Fn>
bool ForEachRuntime(const GroupContext& c, Fn fn) {
  bool ok = true;
  for (std::size_t i = 0; i < c.in.end->runtimes.size(); ++i) {
    const RuntimeSample& r = c.in.end->runtimes[i];
    if (!r.error.empty()) {
      ok = false;  // as neuron-monitor-prometheus.py, a runtime with an error is skipped
      continue;
    }
    fn(i, r);
  }
  return ok;
}

// Whether the backend measured `signal` at the newest snapshot: an unmeasured signal has no series
// (its counters stay 0 in the snapshot, and a 0 would read as a measurement).
bool Measured(const GroupContext& c, Signal signal) {
  return c.in.end->UnmeasuredReason(signal).empty();
}

bool AddAll(const GroupContext& c, std::initializer_list<FamilyBuilder*> families) {
  bool ok = true;
  for (FamilyBuilder* f : families) ok = f->AddTo(c.out, c.problems) && ok;
  return ok;
}

}  // namespace

FamilyBuilder::FamilyBuilder(std::string name, std::string help, MetricType type,
                             std::optional<std::string> unit) {
  family_.name = std::move(name);
  family_.help = std::move(help);
  family_.type = type;
  family_.unit = std::move(unit);
}

void FamilyBuilder::Add(std::vector<Label> labels, double value) {
  MetricSample& s = family_.samples.emplace_back();
  s.labels = std::move(labels);
  s.value = value;
}

void FamilyBuilder::AddHistogram(std::vector<Label> labels, HistogramValue histogram) {
  MetricSample& s = family_.samples.emplace_back();
  s.labels = std::move(labels);
  s.histogram = std::move(histogram);
}

bool FamilyBuilder::AddTo(Exposition& exposition, std::vector<std::string>& problems) {
  if (family_.samples.empty()) return true;
  Status s = exposition.Add(std::move(family_));
  if (!s.ok()) problems.push_back(s.message());
  return s.ok();
}

std::vector<Label> WithLabels(const std::vector<Label>& base, std::initializer_list<Label> extra) {
  std::vector<Label> labels;
  labels.reserve(base.size() + extra.size());
  labels.insert(labels.end(), base.begin(), base.end());
  for (const Label& label : extra) {
    const auto at =
        std::upper_bound(labels.begin(), labels.end(), label,
                         [](const Label& a, const Label& b) { return a.name < b.name; });
    labels.insert(at, label);
  }
  return labels;
}

std::vector<Label> InstanceLabels(const v1::InstanceInfo& info) {
  std::vector<Label> labels = {{"availability_zone", info.instance_availability_zone()},
                               {"instance_id", info.instance_id()},
                               {"instance_name", info.instance_name()},
                               {"instance_type", info.instance_type()},
                               {"region", info.instance_region()},
                               {"subnet_id", info.subnet_id()}};
  if (!info.ultraserver_id().empty()) labels.push_back({"ultraserver_id", info.ultraserver_id()});
  return labels;
}

std::vector<std::string> UniqueRuntimeTags(const std::vector<RuntimeSample>& runtimes) {
  std::vector<std::string> tags;
  std::set<std::string, std::less<>> seen;
  for (const RuntimeSample& r : runtimes) {
    std::string tag = r.tag.empty() ? std::to_string(r.pid) : r.tag;
    if (!seen.insert(tag).second) {
      tag += " (pid " + std::to_string(r.pid) + ")";
      seen.insert(tag);
    }
    tags.push_back(std::move(tag));
  }
  return tags;
}

bool AddNeuronCoreCounters(const GroupContext& c) {
  FamilyBuilder util("neuroncore_utilization_ratio", "NeuronCore utilization ratio", kGauge,
                     "ratio");
  const bool ok = ForEachRuntime(c, [&](std::size_t i, const RuntimeSample&) {
    const v1::RuntimeReport* w = WindowOf(c, i);
    if (!c.has_window || w == nullptr || !Measured(c, Signal::kCoreActivity)) return;
    for (const v1::CoreCounters& core : w->neuroncore_counters().cores()) {
      util.Add(RuntimeLabels(c, i, {{"neuroncore", std::to_string(core.index())}}),
               core.utilization_percent() / 100.0);
    }
  });
  return AddAll(c, {&util}) && ok;
}

bool AddMemoryUsed(const GroupContext& c) {
  FamilyBuilder used("neuron_runtime_memory_used_bytes", "Runtime memory used bytes", kGauge,
                     "bytes");
  static constexpr std::array<const char*, 5> kKinds = {
      "constants", "model_code", "model_shared_scratchpad", "runtime_memory", "tensors"};
  std::vector<FamilyBuilder> cores;
  for (const char* kind : kKinds) {
    cores.emplace_back(std::string("neuroncore_memory_usage_") + kind,
                       std::string("NeuronCore memory utilization for ") + kind, kGauge);
  }
  const bool ok = ForEachRuntime(c, [&](std::size_t i, const RuntimeSample& r) {
    used.Add(RuntimeLabels(c, i, {{"memory_location", "host"}}), AsDouble(r.memory->host.Total()));
    // A total that leaves out a shared device would read as the runtime's whole figure.
    if (r.memory->device_unavailable.empty()) {
      used.Add(RuntimeLabels(c, i, {{"memory_location", "neuron_device"}}),
               AsDouble(r.memory->DeviceTotal()));
    }
    for (const CoreMemory& m : r.memory->cores) {
      // memory_location is literally "None" in AWS's exporter; kept for compatibility.
      const std::vector<Label> labels = RuntimeLabels(
          c, i, {{"memory_location", "None"}, {"neuroncore", std::to_string(m.core)}});
      const std::array<std::uint64_t, 5> values = {
          m.constants, m.model_code, m.model_shared_scratchpad, m.runtime_memory, m.tensors};
      for (std::size_t k = 0; k < values.size(); ++k) cores[k].Add(labels, AsDouble(values[k]));
    }
  });
  bool added = used.AddTo(c.out, c.problems);
  for (FamilyBuilder& f : cores) added = f.AddTo(c.out, c.problems) && added;
  return added && ok;
}

bool AddRuntimeVcpuUsage(const GroupContext& c) {
  FamilyBuilder usage("neuron_runtime_vcpu_usage_ratio", "Runtime vCPU utilization ratio", kGauge,
                      "ratio");
  const bool ok = ForEachRuntime(c, [&](std::size_t i, const RuntimeSample& r) {
    const v1::RuntimeReport* w = WindowOf(c, i);
    // A runtime that started inside the window has no CPU baseline yet.
    if (!c.has_window || w == nullptr || !InStart(c, r.pid) || !Measured(c, Signal::kRuntimeCpu))
      return;
    usage.Add(RuntimeLabels(c, i, {{"usage_type", "user"}}), w->vcpu_usage().user_percent() / 100);
    usage.Add(RuntimeLabels(c, i, {{"usage_type", "system"}}),
              w->vcpu_usage().system_percent() / 100);
  });
  return AddAll(c, {&usage}) && ok;
}

bool AddExecutionStats(const GroupContext& c) {
  FamilyBuilder errors("execution_errors_total", "Execution errors total", kCounter);
  FamilyBuilder status("execution_status_total", "Execution status total", kCounter);
  FamilyBuilder latency("execution_latency_seconds", "Execution latency in seconds", kGauge,
                        "seconds");
  const bool executions = Measured(c, Signal::kExecutions);
  const bool ok = ForEachRuntime(c, [&](std::size_t i, const RuntimeSample& r) {
    if (!executions) return;  // nor latency: the window report has none without executions
    const ExecutionCounters& e = r.executions;
    for (const ExecutionField& f : kExecutionFields) {
      if (f.part != ExecutionPart::kError) continue;
      errors.Add(RuntimeLabels(c, i, {{"error_type", std::string(f.name)}}), AsDouble(e.*f.member));
    }
    for (const ExecutionField& f : kExecutionFields) {
      if (f.part != ExecutionPart::kOutcome) continue;
      status.Add(RuntimeLabels(c, i, {{"status_type", std::string(f.name)}}),
                 AsDouble(e.*f.member));
    }
    const v1::RuntimeReport* w = WindowOf(c, i);
    // The window report has no percentiles when latency is unmeasured.
    if (!c.has_window || w == nullptr || !w->execution_stats().has_total_latency()) return;
    const v1::Percentiles& p = w->execution_stats().total_latency();
    const std::pair<const char*, double> percentiles[] = {
        {"p0", p.p0()},   {"p1", p.p1()},   {"p25", p.p25()},  {"p50", p.p50()},
        {"p75", p.p75()}, {"p99", p.p99()}, {"p100", p.p100()}};
    for (const auto& [name, v] : percentiles) {
      latency.Add(RuntimeLabels(c, i, {{"percentile", name}}), v);
    }
  });
  return AddAll(c, {&errors, &status, &latency}) && ok;
}

bool AddCollectivesStats(const GroupContext& c) {
  FamilyBuilder ops("neuron_collective_operations_total",
                    "Collective operations completed, by runtime and operation", kCounter);
  FamilyBuilder bytes("neuron_collective_bytes_total",
                      "Bytes moved by collective operations, by runtime and operation", kCounter,
                      "bytes");
  FamilyBuilder busy("neuron_collective_busy_seconds_total",
                     "Time collective operations were in flight, by runtime and operation",
                     kCounter, "seconds");
  FamilyBuilder latency("neuron_collective_latency_seconds",
                        "Latency of collective operations, by runtime and operation",
                        MetricType::kHistogram, "seconds");
  const std::vector<double> bounds = CollectiveLatencyBounds();
  const bool measured = Measured(c, Signal::kCollectives);
  const bool ok = ForEachRuntime(c, [&](std::size_t i, const RuntimeSample& r) {
    if (!measured) return;
    for (const CollectiveCounters& op : r.collectives) {
      if (op.count == 0) continue;  // never used by this runtime
      const std::vector<Label> labels =
          RuntimeLabels(c, i, {{"operation", CollectiveOpName(CollectiveOpOf(op.kind))}});
      ops.Add(labels, AsDouble(op.count));
      bytes.Add(labels, AsDouble(op.bytes));
      busy.Add(labels, AsDouble(op.busy_ns) * 1e-9);
      latency.AddHistogram(labels, ToPrometheusHistogram(op.latency, bounds));
    }
  });
  return AddAll(c, {&ops, &bytes, &busy, &latency}) && ok;
}

bool AddHwCounters(const GroupContext& c) {
  FamilyBuilder ecc("hardware_ecc_events_total", "Hardware ecc events total", kCounter);
  const bool corrected = Measured(c, Signal::kEccCorrected);
  bool ok = true;
  for (std::size_t d = 0; d < c.in.end->devices.size(); ++d) {
    const DeviceCounters& dev = c.in.end->devices[d];
    if (!dev.present) {
      ok = false;
      continue;
    }
    const std::tuple<const char*, std::uint64_t, bool> events[] = {
        {"mem_ecc_corrected", dev.ecc.mem_corrected, corrected},
        {"mem_ecc_uncorrected", dev.ecc.mem_uncorrected, true},
        {"sram_ecc_corrected", dev.ecc.sram_corrected, corrected},
        {"sram_ecc_uncorrected", dev.ecc.sram_uncorrected, true}};
    for (const auto& [type, n, measured] : events) {
      if (!measured) continue;
      ecc.Add(WithLabels(c.instance,
                         {{"event_type", type}, {"neuron_device_index", std::to_string(d)}}),
              AsDouble(n));
    }
  }
  return AddAll(c, {&ecc}) && ok;
}

bool AddHbmStats(const GroupContext& c) {
  FamilyBuilder read("neuron_hbm_read_bytes_total", "HBM bytes read, by device", kCounter, "bytes");
  FamilyBuilder write("neuron_hbm_write_bytes_total", "HBM bytes written, by device", kCounter,
                      "bytes");
  FamilyBuilder util("neuron_hbm_bandwidth_utilization_ratio",
                     "HBM read plus write bandwidth over the device's peak, by device", kGauge,
                     "ratio");
  FamilyBuilder used(
      "neuron_hbm_used_bytes",
      "HBM in use, by device (the driver's categories, else the runtimes' allocations)", kGauge,
      "bytes");
  FamilyBuilder total("neuron_hbm_total_bytes", "HBM capacity, by device", kGauge, "bytes");
  FamilyBuilder category_used(
      "neuron_device_memory_used_bytes",
      "Device memory in use by the driver's category, summed over the device's cores", kGauge,
      "bytes");
  FamilyBuilder category_peak(
      "neuron_device_memory_peak_bytes",
      "The most device memory each category held since the driver loaded (the cores' high-water "
      "marks, summed)",
      kGauge, "bytes");
  const bool traffic = Measured(c, Signal::kHbmTraffic);
  bool ok = true;
  const auto& hbm = c.window.system().hbm_stats().devices();
  for (std::size_t d = 0; d < c.in.end->devices.size(); ++d) {
    const DeviceCounters& dev = c.in.end->devices[d];
    if (!dev.present || d >= static_cast<std::size_t>(hbm.size())) {
      ok = false;
      continue;
    }
    const std::vector<Label> labels =
        WithLabels(c.instance, {{"neuron_device_index", std::to_string(d)}});
    const v1::DeviceHbm& w = hbm[static_cast<int>(d)];
    if (traffic) {
      read.Add(labels, AsDouble(dev.hbm_read_bytes));
      write.Add(labels, AsDouble(dev.hbm_write_bytes));
      if (c.has_window) util.Add(labels, w.bandwidth_utilization_percent() / 100);
    }
    used.Add(labels, AsDouble(w.used_bytes()));
    total.Add(labels, AsDouble(w.total_bytes()));
    for (const v1::MemoryCategoryUsage& m : w.memory_categories()) {
      const std::vector<Label> by = WithLabels(labels, {{"category", m.category()}});
      category_used.Add(by, AsDouble(m.used_bytes()));
      category_peak.Add(by, AsDouble(m.peak_bytes()));
    }
  }
  return AddAll(c, {&read, &write, &util, &used, &total, &category_used, &category_peak}) && ok;
}

bool AddDeviceHealth(const GroupContext& c) {
  FamilyBuilder health("neuron_device_health",
                       "The device's health (1 for its current state): ok, degraded or failed",
                       kGauge);
  FamilyBuilder reason("neuron_device_health_reason",
                       "A reason the device is not ok (1), by code and the action it asks for",
                       kGauge);
  FamilyBuilder power("neuron_device_power_utilization_ratio",
                      "The device's power draw over its maximum, as the driver last read it",
                      kGauge, "ratio");
  FamilyBuilder errors("neuron_device_hardware_errors_total",
                       "Hardware errors the driver counted since it loaded, by device and type",
                       kCounter);
  const auto& devices = c.window.system().device_health().devices();
  for (const v1::DeviceHealth& h : devices) {
    const std::vector<Label> labels =
        WithLabels(c.instance, {{"neuron_device_index", std::to_string(h.neuron_device_index())}});
    for (v1::HealthState s :
         {v1::HEALTH_STATE_OK, v1::HEALTH_STATE_DEGRADED, v1::HEALTH_STATE_FAILED}) {
      health.Add(WithLabels(labels, {{"state", HealthStateName(s)}}), h.state() == s ? 1 : 0);
    }
    std::set<std::string> codes;
    for (const v1::HealthReason& r : h.reasons()) {
      if (r.state() == v1::HEALTH_STATE_OK || !codes.insert(r.code()).second) continue;
      reason.Add(WithLabels(labels, {{"code", r.code()}, {"action", HealthActionName(r.action())}}),
                 1);
    }
    if (h.power().unavailable().empty()) power.Add(labels, h.power().average_percent() / 100);
    const HardwareErrors t = wire::HardwareErrorsFromProto(h.errors_total());
    const bool kernel_log = h.kernel_log_unavailable().empty();
    for (std::size_t i = 0; i < kHardwareErrorFields.size(); ++i) {
      const HardwareErrorField& f = kHardwareErrorFields[i];
      // What the driver has is exported; what it lacks is left out (errors_unavailable names it).
      if (!f.exported || (h.errors_missing() >> i & 1) != 0) continue;
      if (f.source == ErrorSource::kKernelLog && !kernel_log) continue;
      errors.Add(WithLabels(labels, {{"type", std::string(f.name)}}), AsDouble(t.*f.member));
    }
  }
  return AddAll(c, {&health, &reason, &power, &errors});
}

bool AddVcpuUsage(const GroupContext& c) {
  const HostSample& host = c.in.end->host;
  if (!host.cpu_error.empty()) return false;
  // AWS's name, which promlint refuses for a gauge ("_count" is a histogram suffix); untyped, it
  // passes and AWS's "vCPU Count" panel still finds it.
  FamilyBuilder count("system_vcpu_count", "System vCPU count", MetricType::kUnknown);
  FamilyBuilder usage("system_vcpu_usage_ratio", "System CPU utilization ratio", kGauge, "ratio");
  count.Add(c.instance, AsDouble(host.per_cpu.size()));
  // A window starting at an unreadable /proc/stat has no baseline.
  if (c.has_window && c.in.start->host.cpu_error.empty()) {
    // As the vcpu_usage group's average: from the aggregate line, not the 192 per-CPU ones.
    const CpuUsagePercent a = CpuUsageBetween(c.in.start->host.total, host.total);
    const double user = std::min(100.0, a.user + a.nice);
    const double system = std::min(100.0, a.system + a.io_wait + a.irq + a.soft_irq);
    usage.Add(WithLabels(c.instance, {{"usage_type", "user"}}), user / 100);
    usage.Add(WithLabels(c.instance, {{"usage_type", "system"}}), system / 100);
  }
  return AddAll(c, {&count, &usage});
}

bool AddMemoryInfo(const GroupContext& c) {
  const HostSample& host = c.in.end->host;
  if (!host.memory_error.empty()) return false;
  // Names and HELP texts as neuron-monitor-prometheus.py spells them.
  const std::pair<const char*, std::uint64_t> values[] = {{"memory_total", host.memory_total_bytes},
                                                          {"memory_used", host.memory_used_bytes},
                                                          {"swap_total", host.swap_total_bytes},
                                                          {"swap_used", host.swap_used_bytes}};
  bool ok = true;
  for (const auto& [key, v] : values) {
    const std::string k(key);
    const std::size_t underscore = k.find('_');
    FamilyBuilder f(
        "system_" + k + "_bytes",
        "System " + k.substr(0, underscore) + " " + k.substr(underscore + 1) + "_bytes bytes",
        kGauge, "bytes");
    f.Add(c.instance, AsDouble(v));
    ok = f.AddTo(c.out, c.problems) && ok;
  }
  return ok;
}

bool AddUnavailableSignals(const GroupContext& c) {
  FamilyBuilder info("neuron_unavailable_signal_info",
                     "A signal the device backend cannot measure, and why; its series are absent",
                     MetricType::kInfo);
  for (int k = 0; k < kSignals; ++k) {
    const Signal signal = static_cast<Signal>(k);
    const std::string& reason = c.in.end->UnmeasuredReason(signal);
    if (!reason.empty())
      info.Add(WithLabels(c.instance, {{"reason", reason}, {"signal", SignalName(signal)}}), 1);
  }
  return AddAll(c, {&info});
}

bool AddInventoryInfo(const GroupContext& c) {
  FamilyBuilder instance("instance_info", "EC2 instance information", MetricType::kInfo);
  instance.Add(c.instance, 1);
  FamilyBuilder hardware("neuron_hardware_info", "Neuron Hardware Information", MetricType::kInfo);
  const v1::HardwareInfo& hw = c.in.inventory->hardware_info();
  hardware.Add(
      WithLabels(
          c.instance,
          {{"neuron_device_count", std::to_string(hw.neuron_device_count())},
           {"neuron_device_memory_size", std::to_string(hw.neuron_device_memory_size())},
           {"neuroncore_per_device_count", std::to_string(hw.neuroncore_per_device_count())}}),
      1);
  // Which runtime and framework versions run here: what the runtime's datastore names (a real
  // host) or the scenario says (the simulator); absent where neither version is known.
  FamilyBuilder runtime("neuron_runtime_info",
                        "The Neuron runtime's version and the framework's it serves, as the "
                        "runtime names them",
                        MetricType::kInfo);
  for (std::size_t i = 0; i < c.runtime_processes.size(); ++i) {
    const v1::Process* p = c.runtime_processes[i];
    if (p == nullptr || (p->runtime_version().empty() && p->framework_version().empty())) continue;
    runtime.Add(RuntimeLabels(c, i,
                              {{"framework_version", p->framework_version()},
                               {"runtime_version", p->runtime_version()}}),
                1);
  }
  return AddAll(c, {&instance, &hardware, &runtime});
}

}  // namespace neuronmon::daemon::metrics_internal
