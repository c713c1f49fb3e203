#include "proto/wire/terminal_safe.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/reflection.h>

#include <vector>

#include "proto/common/terminal_text.h"

namespace neuronmon::wire {
namespace {

using google::protobuf::FieldDescriptor;

void MakeFieldSafe(google::protobuf::Message& m, const google::protobuf::Reflection& r,
                   const FieldDescriptor& f) {
  if (f.type() == FieldDescriptor::TYPE_STRING) {
    if (!f.is_repeated()) {
      const std::string& text = r.GetStringReference(m, &f, nullptr);
      if (!IsTerminalSafe(text)) r.SetString(&m, &f, SanitizeForTerminal(text));
      return;
    }
    for (int i = 0; i < r.FieldSize(m, &f); ++i) {
      const std::string& text = r.GetRepeatedStringReference(m, &f, i, nullptr);
      if (!IsTerminalSafe(text)) r.SetRepeatedString(&m, &f, i, SanitizeForTerminal(text));
    }
    return;
  }
  if (f.cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) return;
  if (!f.is_repeated()) {
    MakeTerminalSafe(*r.MutableMessage(&m, &f));
    return;
  }
  for (int i = 0; i < r.FieldSize(m, &f); ++i)
    MakeTerminalSafe(*r.MutableRepeatedMessage(&m, &f, i));
}

}  // namespace

void MakeTerminalSafe(google::protobuf::Message& message) {
  const google::protobuf::Reflection& r = *message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  r.ListFields(message, &fields);  // the fields that are set: no empty sub-messages created
  for (const FieldDescriptor* f : fields) MakeFieldSafe(message, r, *f);
}

}  // namespace neuronmon::wire
