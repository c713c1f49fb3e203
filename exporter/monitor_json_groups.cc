#include "exporter/monitor_json_groups.h"

#include <array>
#include <charconv>
#include <cmath>
#include <string>
#include <utility>

#include "proto/names/names.h"
#include "proto/wire/field_codec.h"

namespace neuronmon::exporter::monitor_json {
namespace {

constexpr std::int64_t kNanosPerSecond = 1'000'000'000;
// FLOP/s print as integers; beyond int64 (never reached by real hardware) they saturate.
constexpr double kMaxIntegerFlops = 9.2e18;

// A map key that is a number, as Go writes map[int]... or map[string]... keyed by index.
void IndexKey(JsonWriter& w, std::uint32_t index) {
  std::array<char, 10> text;
  const char* end = std::to_chars(text.data(), text.data() + text.size(), index).ptr;
  w.Key(std::string_view(text.data(), static_cast<std::size_t>(end - text.data())));
}

// neuron-monitor's flops are integers of FLOP/s; ours are measured as doubles.
std::uint64_t RoundFlops(double flops_per_second) {
  if (!(flops_per_second > 0)) return 0;  // also NaN
  if (flops_per_second >= kMaxIntegerFlops) return static_cast<std::uint64_t>(kMaxIntegerFlops);
  return static_cast<std::uint64_t>(std::llround(flops_per_second));
}

double Round2(double percent) { return std::round(percent * 100) / 100; }

// ---- runtime-level groups ----

// A runtime group with an error carries no figures (report.proto): its map of figures is empty
// and its other figure keys are left out, so nothing unmeasured reads as a 0. Unmeasured FLOPs
// alone leave out each core's flops keys, with the reason in `error`.
void WriteCoreCounters(JsonWriter& w, const v1::NeuronCoreCounters& counters) {
  const bool flops = counters.flops_unavailable().empty();
  w.BeginObject();
  PeriodField(w, counters.period_ns());
  w.Key("neuroncores_in_use");
  w.BeginObject();
  for (const v1::CoreCounters& core : counters.cores()) {
    IndexKey(w, core.index());
    w.BeginObject();
    DoubleField(w, "neuroncore_utilization", core.utilization_percent());
    if (flops) {
      UintField(w, "flops", RoundFlops(core.flops()));
      UintField(w, "effective_flops", RoundFlops(core.effective_flops()));
    }
    if (core.physical_size() > 0) {
      w.Key("v3d");
      w.BeginObject();
      for (const v1::PhysicalCoreUtilization& physical : core.physical()) {
        std::array<char, 16> key = {'n', 'c', '_', 'v', '3', '.'};
        const char* end =
            std::to_chars(key.data() + 6, key.data() + key.size(), physical.index()).ptr;
        w.Key(std::string_view(key.data(), static_cast<std::size_t>(end - key.data())));
        w.BeginObject();
        DoubleField(w, "neuroncore_utilization", physical.utilization_percent());
        w.EndObject();
      }
      w.EndObject();
    }
    w.EndObject();
  }
  w.EndObject();
  StringField(w, "error",
              JoinErrors(counters.error(), Unavailable("flops", counters.flops_unavailable())));
  w.EndObject();
}

void WriteHostBreakdown(JsonWriter& w, const v1::HostMemoryBreakdown& host) {
  w.BeginObject();
  UintField(w, "application_memory", host.application_memory());
  UintField(w, "constants", host.constants());
  UintField(w, "dma_buffers", host.dma_buffers());
  UintField(w, "tensors", host.tensors());
  w.EndObject();
}

void WriteSubgraph(JsonWriter& w, const v1::Subgraph& subgraph) {
  w.Key(subgraph.name());
  w.BeginObject();
  w.Key("memory_used_bytes");
  w.BeginObject();
  UintField(w, "host", subgraph.host_bytes());
  UintField(w, "neuron_device", subgraph.device_bytes());
  w.Key("usage_breakdown");
  w.BeginObject();
  w.Key("host");
  WriteHostBreakdown(w, subgraph.host());
  w.Key("neuron_device");
  w.BeginObject();
  UintField(w, "constants", subgraph.device().constants());
  UintField(w, "model_code", subgraph.device().model_code());
  UintField(w, "runtime_memory", subgraph.device().runtime_memory());
  UintField(w, "tensors", subgraph.device().tensors());
  w.EndObject();
  w.EndObject();
  w.EndObject();
  UintField(w, "neuroncore_index", subgraph.neuroncore_index());
  UintField(w, "neuron_device_index", subgraph.neuron_device_index());
  w.EndObject();
}

void WriteLoadedModel(JsonWriter& w, const v1::LoadedModel& model) {
  w.BeginObject();
  StringField(w, "name", model.name());
  StringField(w, "uuid", model.uuid());
  UintField(w, "model_id", model.model_id());
  w.Key("is_running");
  w.Bool(model.is_running());
  w.Key("subgraphs");
  w.BeginObject();
  for (const v1::Subgraph& subgraph : model.subgraphs()) WriteSubgraph(w, subgraph);
  w.EndObject();
  w.EndObject();
}

void WriteMemoryUsed(JsonWriter& w, const v1::MemoryUsed& memory) {
  w.BeginObject();
  PeriodField(w, memory.period_ns());
  w.Key("neuron_runtime_used_bytes");
  w.BeginObject();
  UintField(w, "host", memory.host_bytes());
  UintField(w, "neuron_device", memory.device_bytes());
  w.Key("usage_breakdown");
  w.BeginObject();
  w.Key("host");
  WriteHostBreakdown(w, memory.host());
  w.Key("neuroncore_memory_usage");
  w.BeginObject();
  for (const v1::CoreMemory& core : memory.cores()) {
    IndexKey(w, core.index());
    w.BeginObject();
    UintField(w, "constants", core.constants());
    UintField(w, "model_code", core.model_code());
    UintField(w, "model_shared_scratchpad", core.model_shared_scratchpad());
    UintField(w, "runtime_memory", core.runtime_memory());
    UintField(w, "tensors", core.tensors());
    w.EndObject();
  }
  w.EndObject();
  w.EndObject();
  w.EndObject();
  w.Key("loaded_models");
  w.BeginArray();
  for (const v1::LoadedModel& model : memory.loaded_models()) WriteLoadedModel(w, model);
  w.EndArray();
  // A partial device figure says so where neuron-monitor's readers look for problems.
  StringField(w, "error", memory.error().empty() ? memory.device_unavailable() : memory.error());
  w.EndObject();
}

void WriteRuntimeVcpu(JsonWriter& w, const v1::RuntimeVcpuUsage& vcpu) {
  w.BeginObject();
  PeriodField(w, vcpu.period_ns());
  if (vcpu.error().empty()) {
    w.Key("vcpu_usage");
    w.BeginObject();
    DoubleField(w, "user", Round2(vcpu.user_percent()));
    DoubleField(w, "system", Round2(vcpu.system_percent()));
    w.EndObject();
  }
  StringField(w, "error", vcpu.error());
  w.EndObject();
}

// `part`'s counters as one object, in neuron-monitor's order.
void WriteSummary(JsonWriter& w, const char* key, const ExecutionCounters& e, ExecutionPart part) {
  w.Key(key);
  w.BeginObject();
  for (const ExecutionField& f : kExecutionFields) {
    if (f.part == part) UintField(w, f.name, e.*f.member);
  }
  w.EndObject();
}

void WriteExecutionSummaries(JsonWriter& w, const v1::ExecutionStats& stats) {
  const ExecutionCounters e =
      wire::ExecutionSummariesFromProto(stats.error_summary(), stats.execution_summary());
  WriteSummary(w, "error_summary", e, ExecutionPart::kError);
  WriteSummary(w, "execution_summary", e, ExecutionPart::kOutcome);
}

// Unmeasured latency is absent latency as AWS prints it (null percentiles), with the reason in
// `error`.
void WriteExecutionStats(JsonWriter& w, const v1::ExecutionStats& stats) {
  w.BeginObject();
  PeriodField(w, stats.period_ns());
  if (stats.error().empty()) WriteExecutionSummaries(w, stats);
  w.Key("latency_stats");
  w.BeginObject();
  WritePercentiles(w, "total_latency", stats.has_total_latency(), stats.total_latency());
  WritePercentiles(w, "device_latency", stats.has_device_latency(), stats.device_latency());
  w.EndObject();
  StringField(w, "error",
              JoinErrors(stats.error(), Unavailable("latency", stats.latency_unavailable())));
  w.EndObject();
}

// ---- system-level groups ----

void WriteCpu(JsonWriter& w, const v1::CpuUsage& cpu) {
  w.BeginObject();
  DoubleField(w, "user", cpu.user());
  DoubleField(w, "nice", cpu.nice());
  DoubleField(w, "system", cpu.system());
  DoubleField(w, "idle", cpu.idle());
  DoubleField(w, "io_wait", cpu.io_wait());
  DoubleField(w, "irq", cpu.irq());
  DoubleField(w, "soft_irq", cpu.soft_irq());
  w.EndObject();
}

void WriteSystemVcpu(JsonWriter& w, const v1::VcpuUsage& vcpu) {
  w.BeginObject();
  PeriodField(w, vcpu.period_ns());
  w.Key("average_usage");
  WriteCpu(w, vcpu.average());
  w.Key("usage_data");
  w.BeginObject();
  for (const v1::CpuUsage& cpu : vcpu.per_cpu()) {
    IndexKey(w, cpu.cpu());
    WriteCpu(w, cpu);
  }
  w.EndObject();
  UintField(w, "context_switch_count", vcpu.context_switch_count());
  StringField(w, "error", vcpu.error());
  w.EndObject();
}

void WriteMemoryInfo(JsonWriter& w, const v1::MemoryInfo& memory) {
  w.BeginObject();
  PeriodField(w, memory.period_ns());
  UintField(w, "memory_total_bytes", memory.memory_total_bytes());
  UintField(w, "memory_used_bytes", memory.memory_used_bytes());
  UintField(w, "swap_total_bytes", memory.swap_total_bytes());
  UintField(w, "swap_used_bytes", memory.swap_used_bytes());
  StringField(w, "error", memory.error());
  w.EndObject();
}

void WriteHwCounters(JsonWriter& w, const v1::HwCounters& counters) {
  const bool corrected = counters.corrected_unavailable().empty();
  w.BeginObject();
  PeriodField(w, counters.period_ns());
  w.Key("neuron_devices");
  w.BeginArray();
  for (const v1::DeviceEcc& device : counters.devices()) {
    w.BeginObject();
    UintField(w, "neuron_device_index", device.neuron_device_index());
    if (corrected) UintField(w, "mem_ecc_corrected", device.mem_ecc_corrected());
    UintField(w, "mem_ecc_uncorrected", device.mem_ecc_uncorrected());
    UintField(w, "sram_ecc_uncorrected", device.sram_ecc_uncorrected());
    if (corrected) UintField(w, "sram_ecc_corrected", device.sram_ecc_corrected());
    w.EndObject();
  }
  w.EndArray();
  StringField(w, "error",
              JoinErrors(counters.error(),
                         Unavailable("corrected ECC counts", counters.corrected_unavailable())));
  w.EndObject();
}

}  // namespace

std::string Unavailable(std::string_view what, std::string_view reason) {
  if (reason.empty()) return "";
  std::string out(what);
  return out.append(" unavailable: ").append(reason);
}

std::string JoinErrors(std::string_view error, std::string_view more) {
  std::string out(error);
  if (!out.empty() && !more.empty()) out += "; ";
  return out.append(more);
}

double GoSeconds(std::int64_t nanos) {
  return static_cast<double>(nanos / kNanosPerSecond) +
         static_cast<double>(nanos % kNanosPerSecond) / 1e9;
}

void WritePercentiles(JsonWriter& w, std::string_view key, bool present, const v1::Percentiles& p) {
  w.Key(key);
  if (!present) {
    w.Null();
    return;
  }
  w.BeginObject();
  DoubleField(w, "p0", p.p0());
  DoubleField(w, "p1", p.p1());
  DoubleField(w, "p100", p.p100());
  DoubleField(w, "p25", p.p25());
  DoubleField(w, "p50", p.p50());
  DoubleField(w, "p75", p.p75());
  DoubleField(w, "p99", p.p99());
  w.EndObject();
}

// Who runs a runtime (an extension): only what is known, in the message's order.
void WriteAttribution(JsonWriter& w, const v1::Attribution& a) {
  w.BeginObject();
  if (a.has_uid()) UintField(w, "uid", a.uid());
  const std::pair<const char*, const std::string*> texts[] = {
      {"user", &a.user()},
      {"container_id", &a.container_id()},
      {"pod_uid", &a.pod_uid()},
      {"pod", &a.pod()},
      {"namespace", &a.namespace_()},
      {"container", &a.container()},
      {"slurm_job_id", &a.slurm_job_id()},
      {"slurm_array_job_id", &a.slurm_array_job_id()},
      {"slurm_array_task_id", &a.slurm_array_task_id()},
      {"slurm_step", &a.slurm_step()}};
  for (const auto& [key, value] : texts) {
    if (!value->empty()) StringField(w, key, *value);
  }
  if (a.slurm_claimed()) {
    w.Key("slurm_claimed");
    w.Bool(true);
  }
  w.EndObject();
}

void WriteRuntimeEntry(JsonWriter& w, const client::ReportAccumulator::Runtime& runtime,
                       const RenderOptions& options) {
  const v1::RuntimeReport& r = runtime.report;
  w.BeginObject();
  UintField(w, "pid", r.pid());
  StringField(w, "neuron_runtime_tag", r.tag());
  StringField(w, "error", r.error());
  if (options.include_extensions && r.has_attribution()) {
    w.Key("attribution");
    WriteAttribution(w, r.attribution());
  }
  w.Key("report");
  w.BeginObject();
  // Group names (proto/names) sorted as strings, ours among AWS's.
  if (options.include_extensions && runtime.has_analysis) {
    w.Key(GroupName(v1::GROUP_BOTTLENECK_ANALYSIS));
    WriteBottleneckAnalysis(w, r.findings_period_ns(), r.findings());
  }
  if (options.include_extensions && r.has_collectives_stats()) {
    w.Key(GroupName(v1::GROUP_COLLECTIVES_STATS));
    WriteCollectivesStats(w, r.collectives_stats());
  }
  if (r.has_execution_stats()) {
    w.Key(GroupName(v1::GROUP_EXECUTION_STATS));
    WriteExecutionStats(w, r.execution_stats());
  }
  if (r.has_memory_used()) {
    w.Key(GroupName(v1::GROUP_MEMORY_USED));
    WriteMemoryUsed(w, r.memory_used());
  }
  if (r.has_vcpu_usage()) {
    w.Key(GroupName(v1::GROUP_NEURON_RUNTIME_VCPU_USAGE));
    WriteRuntimeVcpu(w, r.vcpu_usage());
  }
  if (r.has_neuroncore_counters()) {
    w.Key(GroupName(v1::GROUP_NEURONCORE_COUNTERS));
    WriteCoreCounters(w, r.neuroncore_counters());
  }
  w.EndObject();
  w.EndObject();
}

void WriteSystemData(JsonWriter& w, const client::ReportAccumulator::System& system,
                     const RenderOptions& options) {
  const v1::SystemReport& s = system.groups;
  w.BeginObject();
  if (options.include_extensions && system.has_analysis) {
    w.Key(GroupName(v1::GROUP_BOTTLENECK_ANALYSIS));
    WriteBottleneckAnalysis(w, system.analysis_period_ns, system.findings);
  }
  if (options.include_extensions && s.has_device_health()) {
    w.Key(GroupName(v1::GROUP_DEVICE_HEALTH));
    WriteDeviceHealth(w, s.device_health());
  }
  if (options.include_extensions && s.has_hbm_stats()) {
    w.Key(GroupName(v1::GROUP_HBM_STATS));
    WriteHbmStats(w, s.hbm_stats());
  }
  if (s.has_memory_info()) {
    w.Key(GroupName(v1::GROUP_MEMORY_INFO));
    WriteMemoryInfo(w, s.memory_info());
  }
  if (s.has_neuron_hw_counters()) {
    w.Key(GroupName(v1::GROUP_NEURON_HW_COUNTERS));
    WriteHwCounters(w, s.neuron_hw_counters());
  }
  if (s.has_vcpu_usage()) {
    w.Key(GroupName(v1::GROUP_VCPU_USAGE));
    WriteSystemVcpu(w, s.vcpu_usage());
  }
  w.EndObject();
}

}  // namespace neuronmon::exporter::monitor_json
