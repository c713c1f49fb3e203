#include "exporter/monitor_json.h"

#include <algorithm>
#include <array>
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

// Puts each group the accumulator stores into document order as it arrives.
class DocumentOrder final : public client::ReportAccumulator::Observer {
 public:
  void Stored(v1::Group group, v1::RuntimeReport& runtime) override {
    switch (group) {
      case v1::GROUP_NEURONCORE_COUNTERS:
        PutInDocumentOrder(*runtime.mutable_neuroncore_counters());
        break;
      case v1::GROUP_MEMORY_USED:
        PutInDocumentOrder(*runtime.mutable_memory_used());
        break;
      case v1::GROUP_COLLECTIVES_STATS:
        PutInDocumentOrder(*runtime.mutable_collectives_stats());
        break;
      default:
        break;
    }
  }
  void Stored(v1::Group group, client::ReportAccumulator::System& system) override {
    if (group == v1::GROUP_VCPU_USAGE) PutInDocumentOrder(*system.groups.mutable_vcpu_usage());
  }
};

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
  DocumentOrder order;
  merged_.Apply(report, source, &order);
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
