#include "proto/wire/field_codec.h"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace neuronmon::wire {
namespace {

using google::protobuf::FieldDescriptor;

// The message's field of each row of `table`, in the table's order.
template <typename Message, std::size_t N, typename Row>
std::array<const FieldDescriptor*, N> FieldsOf(const std::array<Row, N>& table) {
  std::array<const FieldDescriptor*, N> fields{};
  const google::protobuf::Descriptor* d = Message::descriptor();
  for (std::size_t i = 0; i < N; ++i) {
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

const std::array<const FieldDescriptor*, kHardwareErrorFields.size()>& HardwareErrorProtoFields() {
  static const auto fields = FieldsOf<v1::HardwareErrorCounts>(kHardwareErrorFields);
  return fields;
}

}  // namespace

void HardwareErrorsToProto(const HardwareErrors& errors, v1::HardwareErrorCounts& out) {
  const auto& fields = HardwareErrorProtoFields();
  const google::protobuf::Reflection* r = out.GetReflection();
  for (std::size_t i = 0; i < fields.size(); ++i) {
    r->SetUInt64(&out, fields[i], errors.*kHardwareErrorFields[i].member);
  }
}

HardwareErrors HardwareErrorsFromProto(const v1::HardwareErrorCounts& counts) {
  const auto& fields = HardwareErrorProtoFields();
  const google::protobuf::Reflection* r = counts.GetReflection();
  HardwareErrors out;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    out.*kHardwareErrorFields[i].member = r->GetUInt64(counts, fields[i]);
  }
  return out;
}

}  // namespace neuronmon::wire
