// Our additive groups (docs/json-schema.md): bottleneck_analysis, collectives_stats, hbm_stats,
// device_health.
// They follow AWS's conventions — `period` first and `error` last, map keys sorted as strings,
// counts and bytes as integers, rates and shares as floats.
#include "exporter/monitor_json_groups.h"
#include "proto/names/names.h"
#include "proto/wire/field_codec.h"

namespace neuronmon::exporter::monitor_json {
namespace {

void WriteEvidence(JsonWriter& w, const v1::Evidence& evidence) {
  w.BeginObject();
  StringField(w, "name", evidence.name());
  DoubleField(w, "value", evidence.value());
  StringField(w, "unit", evidence.unit());
  DoubleField(w, "threshold", evidence.threshold());
  StringField(w, "comparison", evidence.comparison());
  w.EndObject();
}

void WriteFinding(JsonWriter& w, const v1::Finding& finding) {
  w.BeginObject();
  StringField(w, "kind", FindingKindName(finding.kind()));
  StringField(w, "severity", SeverityName(finding.severity()));
  StringField(w, "subject", finding.subject());
  StringField(w, "summary", finding.summary());
  StringField(w, "advice", finding.advice());
  DoubleField(w, "confidence", finding.confidence());
  w.Key("evidence");
  w.BeginArray();
  for (const v1::Evidence& evidence : finding.evidence()) WriteEvidence(w, evidence);
  w.EndArray();
  DoubleField(w, "since", GoSeconds(finding.since_unix_ns()));
  if (!finding.straggler().empty()) StringField(w, "straggler", finding.straggler());
  w.EndObject();
}

void WriteCollective(JsonWriter& w, const v1::CollectiveStats& op) {
  w.Key(CollectiveOpName(op.op()));
  w.BeginObject();
  UintField(w, "count", op.count());
  UintField(w, "bytes", op.bytes());
  DoubleField(w, "operations_per_second", op.operations_per_second());
  DoubleField(w, "bytes_per_second", op.bytes_per_second());
  DoubleField(w, "mean_message_bytes", op.mean_message_bytes());
  DoubleField(w, "time_share", op.time_share());
  WritePercentiles(w, "latency", op.has_latency(), op.latency());
  w.EndObject();
}

void WriteErrorCounts(JsonWriter& w, const char* key, const v1::HardwareErrorCounts& counts) {
  w.Key(key);
  w.BeginObject();
  const HardwareErrors e = wire::HardwareErrorsFromProto(counts);
  for (const HardwareErrorField& f : kHardwareErrorFields) {
    UintField(w, f.name, e.*f.member);
  }
  w.EndObject();
}

void WritePower(JsonWriter& w, const v1::PowerUtilization& power) {
  w.Key("power");
  w.BeginObject();
  if (power.unavailable().empty()) {
    DoubleField(w, "utilization_percent", power.average_percent());
    DoubleField(w, "min_percent", power.min_percent());
    DoubleField(w, "max_percent", power.max_percent());
    if (power.sampled_unix_ns() != 0) DoubleField(w, "sampled", GoSeconds(power.sampled_unix_ns()));
  }
  StringField(w, "error", Unavailable("power", power.unavailable()));
  w.EndObject();
}

void WriteHealth(JsonWriter& w, const v1::DeviceHealth& device) {
  w.BeginObject();
  UintField(w, "neuron_device_index", device.neuron_device_index());
  StringField(w, "state", HealthStateName(device.state()));
  StringField(w, "action", HealthActionName(device.action()));
  StringField(w, "advice", device.advice());
  w.Key("reasons");
  w.BeginArray();
  for (const v1::HealthReason& r : device.reasons()) {
    w.BeginObject();
    StringField(w, "code", r.code());
    StringField(w, "text", r.text());
    StringField(w, "state", HealthStateName(r.state()));
    StringField(w, "action", HealthActionName(r.action()));
    w.EndObject();
  }
  w.EndArray();
  WritePower(w, device.power());
  WriteErrorCounts(w, "hardware_errors", device.errors());
  WriteErrorCounts(w, "hardware_errors_total", device.errors_total());
  StringField(w, "error", Unavailable("hardware errors", device.errors_unavailable()));
  StringField(w, "kernel_log_error", Unavailable("kernel log", device.kernel_log_unavailable()));
  w.EndObject();
}

}  // namespace

void WriteDeviceHealth(JsonWriter& w, const v1::DeviceHealthStats& health) {
  w.BeginObject();
  PeriodField(w, health.period_ns());
  w.Key("neuron_devices");
  w.BeginArray();
  for (const v1::DeviceHealth& device : health.devices()) WriteHealth(w, device);
  w.EndArray();
  StringField(w, "error", health.error());
  w.EndObject();
}

void WriteBottleneckAnalysis(JsonWriter& w, std::uint64_t period_ns,
                             const google::protobuf::RepeatedPtrField<v1::Finding>& findings) {
  w.BeginObject();
  PeriodField(w, period_ns);
  w.Key("findings");
  w.BeginArray();
  for (const v1::Finding& finding : findings) WriteFinding(w, finding);
  w.EndArray();
  StringField(w, "error", "");
  w.EndObject();
}

void WriteCollectivesStats(JsonWriter& w, const v1::CollectivesStats& collectives) {
  w.BeginObject();
  PeriodField(w, collectives.period_ns());
  w.Key("operations");
  w.BeginObject();
  for (const v1::CollectiveStats& op : collectives.operations()) WriteCollective(w, op);
  w.EndObject();
  // A group with an error carries no figures: no time share to print.
  if (collectives.error().empty()) DoubleField(w, "time_share", collectives.time_share());
  StringField(w, "error", collectives.error());
  w.EndObject();
}

// Without an HBM traffic counter the devices carry only their memory; the reason is the group's
// error.
void WriteHbmStats(JsonWriter& w, const v1::HbmStats& hbm) {
  const bool bandwidth = hbm.bandwidth_unavailable().empty();
  w.BeginObject();
  PeriodField(w, hbm.period_ns());
  w.Key("neuron_devices");
  w.BeginArray();
  for (const v1::DeviceHbm& device : hbm.devices()) {
    w.BeginObject();
    UintField(w, "neuron_device_index", device.neuron_device_index());
    if (bandwidth) {
      DoubleField(w, "read_bytes_per_second", device.read_bytes_per_second());
      DoubleField(w, "write_bytes_per_second", device.write_bytes_per_second());
      DoubleField(w, "bandwidth_utilization_percent", device.bandwidth_utilization_percent());
    }
    UintField(w, "used_bytes", device.used_bytes());
    UintField(w, "total_bytes", device.total_bytes());
    if (device.memory_categories_size() > 0) {
      w.Key("memory_categories");
      w.BeginObject();
      for (const v1::MemoryCategoryUsage& m : device.memory_categories()) {
        w.Key(m.category());
        w.BeginObject();
        UintField(w, "used_bytes", m.used_bytes());
        UintField(w, "peak_bytes", m.peak_bytes());
        w.EndObject();
      }
      w.EndObject();
    }
    StringField(w, "error",
                JoinErrors(device.error(), Unavailable("memory categories",
                                                       device.memory_categories_unavailable())));
    w.EndObject();
  }
  w.EndArray();
  StringField(w, "error",
              JoinErrors(hbm.error(), Unavailable("bandwidth", hbm.bandwidth_unavailable())));
  w.EndObject();
}

}  // namespace neuronmon::exporter::monitor_json
