// JsonWriter: a streaming JSON writer that appends to a caller-owned std::string and produces,
// byte for byte, what Go's encoding/json produces (AWS's neuron-monitor and neuron-ls are Go
// programs, and users' scripts compare their output). Compact style matches json.Marshal;
// indented style matches json.MarshalIndent(v, "", "    ").
//
// Numbers follow Go's floatEncoder: shortest round-trip digits, plain decimal unless
// |v| < 1e-6 or |v| >= 1e21, then exponent form with Go's cleanup ("1e-7", "1e+21"); whole
// numbers have no ".0"; -0 prints "-0". NaN and ±Inf print `null` (Go would fail the whole
// document instead). Strings are escaped as Go does with HTML escaping on: \" \\ \n \r \t,
// other bytes < 0x20 as \u00xx (lowercase hex; Go >= 1.22 would write \b and \f for 0x08 and
// 0x0c), < > & as \u003c \u003e \u0026, U+2028/U+2029 as \u2028/\u2029, and each byte of
// invalid UTF-8 as \ufffd.
//
// The writer borrows the output string (it must outlive the writer) and never allocates beyond
// the string's own growth. Calls must form one valid JSON value; the writer inserts commas and
// (indented) line breaks but does not validate the sequence. Not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace neuronmon::exporter {

class JsonWriter {
 public:
  enum class Style {
    kCompact,   // json.Marshal: no whitespace
    kIndented,  // json.MarshalIndent(v, "", "    ")
  };

  // Appends to `out`, which must outlive the writer.
  explicit JsonWriter(std::string& out, Style style = Style::kCompact) : out_(out), style_(style) {}

  void BeginObject();
  void EndObject();
  void BeginArray();
  void EndArray();
  // An object member's name. REQUIRES: inside an object, and followed by exactly one value.
  void Key(std::string_view key);

  void String(std::string_view value);
  void Double(double value);
  void Int(std::int64_t value);
  void Uint(std::uint64_t value);
  void Bool(bool value);
  void Null();

 private:
  // Writes the separator (comma, line break, indent) that precedes a value or key.
  void BeforeElement();
  void Open(char bracket);
  void Close(char bracket);
  void NewLine();

  std::string& out_;  // borrowed, see constructor
  Style style_;
  int depth_ = 0;
  bool need_comma_ = false;  // the current container already holds an element
  bool after_key_ = false;   // a Key was written and its value is next
};

// Appends `value` as a quoted, Go-escaped JSON string.
void AppendJsonString(std::string& out, std::string_view value);

// Appends `value` as Go's encoding/json writes a float64 (see the header comment).
void AppendJsonDouble(std::string& out, double value);

}  // namespace neuronmon::exporter
