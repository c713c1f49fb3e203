#include "exporter/monitor_json.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <charconv>
#include <string_view>

#include "exporter/json_writer.h"
#include "exporter/monitor_json_groups.h"

namespace neuronmon::exporter {
namespace {

// Go's encoding/json sorts map keys as strings ("0", "1", "10", "2"); the state stores each
// map-keyed list in that order once, when it arrives, so that rendering never sorts.
bool DecimalLess(std::uint32_t a, std::uint32_t b) {
  std::array<char, 10> text_a;
  std::array<char, 10> text_b;
  const char* end_a = std::to_chars(text_a.data(), text_a.data() + text_a.size(), a).ptr;
  const char* end_b = std::to_chars(text_b.data(), text_b.data() + text_b.size(), b).ptr;
  return std::string_view(text_a.data(), static_cast<std::size_t>(end_a - text_a.data())) <
         std::string_view(text_b.data(), static_cast<std::size_t>(end_b - text_b.data()));
}

template <typename Message, typename KeyLess>
void SortPointers(google::protobuf::RepeatedPtrField<Message>& field, KeyLess less) {
  std::stable_sort(field.pointer_begin(), field.pointer_end(), less);
}

void PutInDocumentOrder(v1::NeuronCoreCounters& counters) {
  SortPointers(*counters.mutable_cores(), [](const v1::CoreCounters* a, const v1::CoreCounters* b) {
    return DecimalLess(a->index(), b->index());
  });
  for (v1::CoreCounters& core : *counters.mutable_cores()) {
    // "nc_v3.<index>" keys: same prefix, so the string order is the decimal order of the index.
    SortPointers(*core.mutable_physical(),
                 [](const v1::PhysicalCoreUtilization* a, const v1::PhysicalCoreUtilization* b) {
                   return DecimalLess(a->index(), b->index());
                 });
  }
}

void PutInDocumentOrder(v1::MemoryUsed& memory) {
  SortPointers(*memory.mutable_cores(), [](const v1::CoreMemory* a, const v1::CoreMemory* b) {
    return DecimalLess(a->index(), b->index());
  });
  for (v1::LoadedModel& model : *memory.mutable_loaded_models()) {
    SortPointers(*model.mutable_subgraphs(), [](const v1::Subgraph* a, const v1::Subgraph* b) {
      return a->name() < b->name();
    });
  }
}

void PutInDocumentOrder(v1::CollectivesStats& collectives) {
  SortPointers(*collectives.mutable_operations(),
               [](const v1::CollectiveStats* a, const v1::CollectiveStats* b) {
                 return std::string_view(CollectiveOpName(a->op())) < CollectiveOpName(b->op());
               });
}

void PutInDocumentOrder(v1::VcpuUsage& vcpu) {
  SortPointers(*vcpu.mutable_per_cpu(), [](const v1::CpuUsage* a, const v1::CpuUsage* b) {
    return DecimalLess(a->cpu(), b->cpu());
  });
}

bool HasSystemGroup(const v1::Report& report) {
  if (!report.has_system()) return false;
  const v1::SystemReport& s = report.system();
  return s.has_vcpu_usage() || s.has_memory_info() || s.has_neuron_hw_counters() ||
         s.has_hbm_stats();
}

void WriteInstanceInfo(JsonWriter& w, const v1::InstanceInfo& info) {
  w.BeginObject();
  w.Key("instance_name");
  w.String(info.instance_name());
  w.Key("instance_id");
  w.String(info.instance_id());
  w.Key("instance_type");
  w.String(info.instance_type());
  w.Key("instance_availability_zone");
  w.String(info.instance_availability_zone());
  w.Key("instance_availability_zone_id");
  w.String(info.instance_availability_zone_id());
  w.Key("instance_region");
  w.String(info.instance_region());
  w.Key("ami_id");
  w.String(info.ami_id());
  w.Key("subnet_id");
  w.String(info.subnet_id());
  if (!info.ultraserver_id().empty()) {
    w.Key("ultraserver_id");
    w.String(info.ultraserver_id());
  }
  w.Key("error");
  w.String(info.error());
  w.EndObject();
}

void WriteHardwareInfo(JsonWriter& w, const v1::HardwareInfo& info) {
  w.BeginObject();
  w.Key("neuron_device_type");
  w.String(info.neuron_device_type());
  w.Key("neuron_device_version");
  w.String(info.neuron_device_version());
  w.Key("neuroncore_version");
  w.String(info.neuroncore_version());
  w.Key("neuron_device_count");
  w.Uint(info.neuron_device_count());
  w.Key("neuron_device_memory_size");
  w.Uint(info.neuron_device_memory_size());
  w.Key("neuroncore_per_device_count");
  w.Uint(info.neuroncore_per_device_count());
  w.Key("logical_neuroncore_config");
  w.Uint(info.logical_neuroncore_config());
  w.Key("error");
  w.String(info.error());
  w.EndObject();
}

}  // namespace

void MonitorState::SetInventory(const v1::Inventory& inventory) { inventory_ = inventory; }

void MonitorState::Apply(const v1::Report& report, std::size_t source) {
  assert(source < kMaxSources);
  const std::uint64_t source_bit = std::uint64_t{1} << source;
  const bool runtimes_due = RuntimesWereDue(report);
  for (const v1::RuntimeReport& runtime : report.runtimes()) MergeRuntime(runtime, source_bit);
  if (runtimes_due) DropUnreported(report, source_bit);
  MergeSystem(report);
  has_data_ = true;
}

bool MonitorState::RuntimesWereDue(const v1::Report& report) {
  if (report.groups_size() > 0) {
    return std::any_of(report.groups().begin(), report.groups().end(), [](int g) {
      return g >= v1::GROUP_NEURONCORE_COUNTERS && g <= v1::GROUP_BOTTLENECK_ANALYSIS;
    });
  }
  return report.runtimes_size() > 0 || (!HasSystemGroup(report) && !report.has_totals());
}

void MonitorState::MergeRuntime(const v1::RuntimeReport& in, std::uint64_t source_bit) {
  auto it =
      std::lower_bound(runtimes_.begin(), runtimes_.end(), in.pid(),
                       [](const Runtime& r, std::uint32_t pid) { return r.report.pid() < pid; });
  if (it == runtimes_.end() || it->report.pid() != in.pid()) {
    it = runtimes_.insert(it, Runtime{});
    it->report.set_pid(in.pid());
  }
  Runtime& runtime = *it;
  v1::RuntimeReport& out = runtime.report;
  runtime.sources |= source_bit;
  out.set_tag(in.tag());
  out.set_error(in.error());
  if (in.has_neuroncore_counters()) {
    *out.mutable_neuroncore_counters() = in.neuroncore_counters();
    PutInDocumentOrder(*out.mutable_neuroncore_counters());
  }
  if (in.has_memory_used()) {
    *out.mutable_memory_used() = in.memory_used();
    PutInDocumentOrder(*out.mutable_memory_used());
  }
  if (in.has_vcpu_usage()) *out.mutable_vcpu_usage() = in.vcpu_usage();
  if (in.has_execution_stats()) *out.mutable_execution_stats() = in.execution_stats();
  if (in.has_collectives_stats()) {
    *out.mutable_collectives_stats() = in.collectives_stats();
    PutInDocumentOrder(*out.mutable_collectives_stats());
  }
  // bottleneck_analysis has no message of its own: a period or a finding says it was due.
  if (in.findings_size() > 0 || in.findings_period_ns() > 0) {
    runtime.has_analysis = true;
    *out.mutable_findings() = in.findings();
    out.set_findings_period_ns(in.findings_period_ns());
  }
}

void MonitorState::DropUnreported(const v1::Report& report, std::uint64_t source_bit) {
  std::vector<std::uint32_t> reported;
  reported.reserve(static_cast<std::size_t>(report.runtimes_size()));
  for (const v1::RuntimeReport& r : report.runtimes()) reported.push_back(r.pid());
  std::sort(reported.begin(), reported.end());
  for (Runtime& runtime : runtimes_) {
    if (!std::binary_search(reported.begin(), reported.end(), runtime.report.pid())) {
      runtime.sources &= ~source_bit;
    }
  }
  std::erase_if(runtimes_, [](const Runtime& r) { return r.sources == 0; });
}

void MonitorState::MergeSystem(const v1::Report& report) {
  const v1::SystemReport& in = report.system();
  v1::SystemReport& out = system_.groups;
  if (in.has_vcpu_usage()) {
    *out.mutable_vcpu_usage() = in.vcpu_usage();
    PutInDocumentOrder(*out.mutable_vcpu_usage());
  }
  if (in.has_memory_info()) *out.mutable_memory_info() = in.memory_info();
  if (in.has_neuron_hw_counters()) *out.mutable_neuron_hw_counters() = in.neuron_hw_counters();
  if (in.has_hbm_stats()) *out.mutable_hbm_stats() = in.hbm_stats();
  if (report.findings_size() == 0) return;
  // The instance summary has no period of its own: it covers the runtimes' analysis window, or
  // the report's longest window when no runtime was analysed.
  std::uint64_t period_ns = 0;
  for (const v1::RuntimeReport& r : report.runtimes()) {
    period_ns = std::max(period_ns, r.findings_period_ns());
  }
  system_.has_analysis = true;
  system_.analysis_period_ns = period_ns > 0 ? period_ns : report.period_ns();
  system_.findings = report.findings();
}

void AppendMonitorJson(const MonitorState& state, const RenderOptions& options, std::string& out) {
  JsonWriter w(out);
  w.BeginObject();
  w.Key("neuron_runtime_data");
  w.BeginArray();
  for (const MonitorState::Runtime& runtime : state.runtimes()) {
    monitor_json::WriteRuntimeEntry(w, runtime, options);
  }
  w.EndArray();
  w.Key("system_data");
  monitor_json::WriteSystemData(w, state.system(), options);
  w.Key("instance_info");
  WriteInstanceInfo(w, state.inventory().instance_info());
  w.Key("neuron_hardware_info");
  WriteHardwareInfo(w, state.inventory().hardware_info());
  w.EndObject();
}

std::string RenderMonitorJson(const MonitorState& state, const RenderOptions& options) {
  std::string out;
  AppendMonitorJson(state, options, out);
  return out;
}

}  // namespace neuronmon::exporter
