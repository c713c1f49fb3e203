// Internal to the neuron-monitor document renderer (monitor_json.cc): the writers of the groups
// inside `neuron_runtime_data[].report` and `system_data` — AWS's groups in
// monitor_json_groups.cc, our additive ones in monitor_json_extensions.cc. They read the groups a
// MonitorState stores (its client::ReportAccumulator's, kept in document order) and stream through
// a JsonWriter. Pure; thread-compatible.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "client/report_accumulator.h"
#include "exporter/json_writer.h"
#include "exporter/render_options.h"
#include "neuronmon/v1/inventory.pb.h"
#include "neuronmon/v1/report.pb.h"
#include "proto/names/names.h"

namespace neuronmon::exporter::monitor_json {

// Seconds as Go's time.Duration.Seconds() computes them (whole seconds plus the remainder / 1e9),
// so the same nanoseconds print the same digits as neuron-monitor (4.9997283150000005).
double GoSeconds(std::int64_t nanos);

// `"key":{percentiles}` with the keys as Go sorts them (p0 p1 p100 p25 p50 p75 p99), or
// `"key":null` when `present` is false (nothing completed in the window).
void WritePercentiles(JsonWriter& w, std::string_view key, bool present, const v1::Percentiles& p);

// Writes one `neuron_runtime_data` entry: pid, neuron_runtime_tag, error and report{groups}.
void WriteRuntimeEntry(JsonWriter& w, const client::ReportAccumulator::Runtime& runtime,
                       const RenderOptions& options);

// Writes the `system_data` object.
void WriteSystemData(JsonWriter& w, const client::ReportAccumulator::System& system,
                     const RenderOptions& options);

// Our groups (docs/json-schema.md), each written as one object value.
void WriteBottleneckAnalysis(JsonWriter& w, std::uint64_t period_ns,
                             const google::protobuf::RepeatedPtrField<v1::Finding>& findings);
void WriteCollectivesStats(JsonWriter& w, const v1::CollectivesStats& collectives);
void WriteHbmStats(JsonWriter& w, const v1::HbmStats& hbm);
// Who runs an application (an extension; neuron-ls --who too): an object of the known keys only.
void WriteAttribution(JsonWriter& w, const v1::Attribution& attribution);
void WriteDeviceHealth(JsonWriter& w, const v1::DeviceHealthStats& health);

// "<what> unavailable: <reason>", or "" when `reason` is empty (the figures were measured).
std::string Unavailable(std::string_view what, std::string_view reason);
// A group's `error`: `error` and `more` joined by "; ", either of them possibly empty.
std::string JoinErrors(std::string_view error, std::string_view more);

// Member writers shared by both files: `"key":value`.
inline void UintField(JsonWriter& w, std::string_view key, std::uint64_t value) {
  w.Key(key);
  w.Uint(value);
}
inline void DoubleField(JsonWriter& w, std::string_view key, double value) {
  w.Key(key);
  w.Double(value);
}
inline void StringField(JsonWriter& w, std::string_view key, std::string_view value) {
  w.Key(key);
  w.String(value);
}
// `"period":<seconds>` as neuron-monitor prints it.
inline void PeriodField(JsonWriter& w, std::uint64_t period_ns) {
  DoubleField(w, "period", GoSeconds(static_cast<std::int64_t>(period_ns)));
}

}  // namespace neuronmon::exporter::monitor_json
