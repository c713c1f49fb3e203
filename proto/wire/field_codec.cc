#include "proto/wire/field_codec.h"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace neuronmon::wire {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

// The message's field of each row of `table` that `wanted` selects (null for the others), in the
// table's order.
template <typename M, typename Row, std::size_t N, typename Wanted>
std::array<const FieldDescriptor*, N> FieldsOf(const std::array<Row, N>& table, Wanted wanted) {
  std::array<const FieldDescriptor*, N> fields{};
  const google::protobuf::Descriptor* d = M::descriptor();
  for (std::size_t i = 0; i < N; ++i) {
    if (!wanted(table[i])) continue;
    fields[i] = d->FindFieldByName(std::string(table[i].name));
    if (fields[i] == nullptr || fields[i]->cpp_type() != FieldDescriptor::CPPTYPE_UINT64) {
      std::fprintf(stderr, "%s has no uint64 field %.*s of its field table\n",
                   d->full_name().c_str(), static_cast<int>(table[i].name.size()),
                   table[i].name.data());
      std::abort();
    }
  }
  return fields;
}

template <typename M, typename Row, std::size_t N>
std::array<const FieldDescriptor*, N> FieldsOf(const std::array<Row, N>& table) {
  return FieldsOf<M>(table, [](const Row&) { return true; });
}

// Copies the members of `from` that `fields` names into `out`.
template <typename Struct, typename Row, std::size_t N>
void ToMessage(const Struct& from, const std::array<Row, N>& table,
               const std::array<const FieldDescriptor*, N>& fields, Message& out) {
  const google::protobuf::Reflection* r = out.GetReflection();
  for (std::size_t i = 0; i < N; ++i) {
    if (fields[i] != nullptr) r->SetUInt64(&out, fields[i], from.*table[i].member);
  }
}

template <typename Struct, typename Row, std::size_t N>
void FromMessage(const Message& in, const std::array<Row, N>& table,
                 const std::array<const FieldDescriptor*, N>& fields, Struct& out) {
  const google::protobuf::Reflection* r = in.GetReflection();
  for (std::size_t i = 0; i < N; ++i) {
    if (fields[i] != nullptr) out.*table[i].member = r->GetUInt64(in, fields[i]);
  }
}

const auto& HardwareErrorFieldsOf() {
  static const auto fields = FieldsOf<v1::HardwareErrorCounts>(kHardwareErrorFields);
  return fields;
}

const auto& ExecutionSampleFields() {
  static const auto fields = FieldsOf<v1::ExecutionSample>(kExecutionFields);
  return fields;
}

// The fields of the summary message M holding the counters of `part`.
template <typename M, ExecutionPart part>
const auto& SummaryFields() {
  static const auto fields =
      FieldsOf<M>(kExecutionFields, [](const ExecutionField& f) { return f.part == part; });
  return fields;
}

}  // namespace

void HardwareErrorsToProto(const HardwareErrors& errors, v1::HardwareErrorCounts& out) {
  ToMessage(errors, kHardwareErrorFields, HardwareErrorFieldsOf(), out);
}

HardwareErrors HardwareErrorsFromProto(const v1::HardwareErrorCounts& counts) {
  HardwareErrors out;
  FromMessage(counts, kHardwareErrorFields, HardwareErrorFieldsOf(), out);
  return out;
}

void ExecutionsToProto(const ExecutionCounters& executions, v1::ExecutionSample& out) {
  ToMessage(executions, kExecutionFields, ExecutionSampleFields(), out);
}

ExecutionCounters ExecutionsFromProto(const v1::ExecutionSample& sample) {
  ExecutionCounters out;
  FromMessage(sample, kExecutionFields, ExecutionSampleFields(), out);
  return out;
}

void ExecutionSummariesToProto(const ExecutionCounters& executions, v1::ErrorSummary& errors,
                               v1::ExecutionSummary& outcomes) {
  ToMessage(executions, kExecutionFields, SummaryFields<v1::ErrorSummary, ExecutionPart::kError>(),
            errors);
  ToMessage(executions, kExecutionFields,
            SummaryFields<v1::ExecutionSummary, ExecutionPart::kOutcome>(), outcomes);
}

ExecutionCounters ExecutionSummariesFromProto(const v1::ErrorSummary& errors,
                                              const v1::ExecutionSummary& outcomes) {
  ExecutionCounters out;
  FromMessage(errors, kExecutionFields, SummaryFields<v1::ErrorSummary, ExecutionPart::kError>(),
              out);
  FromMessage(outcomes, kExecutionFields,
              SummaryFields<v1::ExecutionSummary, ExecutionPart::kOutcome>(), out);
  return out;
}

}  // namespace neuronmon::wire
