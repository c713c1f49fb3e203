#include "exporter/json_writer.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>

#include "proto/common/utf8.h"

namespace neuronmon::exporter {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";
constexpr int kIndentWidth = 4;
constexpr double kExactIntegerLimit = 9007199254740992.0;  // 2^53

enum ByteClass : std::uint8_t { kPlain, kEscape, kNonAscii };

constexpr std::array<std::uint8_t, 256> MakeByteClasses() {
  std::array<std::uint8_t, 256> classes{};
  for (int b = 0; b < 256; ++b) {
    if (b < 0x20 || b == '"' || b == '\\' || b == '<' || b == '>' || b == '&') {
      classes[b] = kEscape;
    } else if (b >= 0x80) {
      classes[b] = kNonAscii;
    }
  }
  return classes;
}

constexpr std::array<std::uint8_t, 256> kByteClasses = MakeByteClasses();

void AppendAsciiEscape(std::string& out, unsigned char b) {
  out.push_back('\\');
  switch (b) {
    case '"':
    case '\\':
      out.push_back(static_cast<char>(b));
      return;
    case '\n':
      out.push_back('n');
      return;
    case '\r':
      out.push_back('r');
      return;
    case '\t':
      out.push_back('t');
      return;
    default:
      // Everything else (control bytes and the HTML-sensitive < > &) as \u00xx.
      out.append("u00");
      out.push_back(kHexDigits[b >> 4]);
      out.push_back(kHexDigits[b & 0xF]);
  }
}

// Writes the non-ASCII sequence at value[i] (escaped when Go escapes it) and returns its length.
std::size_t AppendNonAscii(std::string& out, std::string_view value, std::size_t i) {
  const std::size_t length = Utf8SequenceLength(value, i);
  if (length == 0) {
    out.append("\\ufffd");
    return 1;
  }
  // U+2028 and U+2029 (E2 80 A8/A9) break JavaScript string literals; Go escapes them.
  if (length == 3 && value[i] == '\xE2' && value[i + 1] == '\x80' &&
      (value[i + 2] == '\xA8' || value[i + 2] == '\xA9')) {
    out.append(value[i + 2] == '\xA8' ? "\\u2028" : "\\u2029");
  } else {
    out.append(value.data() + i, length);
  }
  return length;
}

// Go formats 'f' from the shortest round-trip digits, padding with zeros; std::to_chars in fixed
// mode would print the exact binary value instead (123456789012345677824 vs ...680000), so the
// digits come from the scientific form and the layout is done here.
void AppendShortestFixed(std::string& out, double value) {
  std::array<char, 32> sci;
  const auto result =
      std::to_chars(sci.data(), sci.data() + sci.size(), value, std::chars_format::scientific);
  const char* p = sci.data();
  if (*p == '-') out.push_back(*p++);
  std::array<char, 20> digits;
  std::size_t count = 0;
  for (; *p != 'e'; ++p) {
    if (*p != '.') digits[count++] = *p;
  }
  int exponent = 0;
  std::from_chars(p + 1 + (p[1] == '+' ? 1 : 0), result.ptr, exponent);
  if (exponent < 0) {
    out.append("0.");
    out.append(static_cast<std::size_t>(-exponent - 1), '0');
    out.append(digits.data(), count);
    return;
  }
  const auto integer_digits = static_cast<std::size_t>(exponent) + 1;
  if (count <= integer_digits) {
    out.append(digits.data(), count);
    out.append(integer_digits - count, '0');
    return;
  }
  out.append(digits.data(), integer_digits);
  out.push_back('.');
  out.append(digits.data() + integer_digits, count - integer_digits);
}

template <typename Integer>
void AppendInteger(std::string& out, Integer value) {
  std::array<char, 24> buffer;
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  out.append(buffer.data(), result.ptr);
}

}  // namespace

void AppendJsonString(std::string& out, std::string_view value) {
  out.push_back('"');
  std::size_t start = 0;
  std::size_t i = 0;
  while (i < value.size()) {
    const auto byte = static_cast<unsigned char>(value[i]);
    const std::uint8_t byte_class = kByteClasses[byte];
    if (byte_class == kPlain) {
      ++i;
      continue;
    }
    out.append(value.data() + start, i - start);
    if (byte_class == kEscape) {
      AppendAsciiEscape(out, byte);
      ++i;
    } else {
      i += AppendNonAscii(out, value, i);
    }
    start = i;
  }
  out.append(value.data() + start, value.size() - start);
  out.push_back('"');
}

void AppendJsonDouble(std::string& out, double value) {
  if (!std::isfinite(value)) {
    out.append("null");
    return;
  }
  const double magnitude = std::fabs(value);
  if (magnitude != 0 && (magnitude < 1e-6 || magnitude >= 1e21)) {
    std::array<char, 32> buffer;
    const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value,
                                      std::chars_format::scientific);
    auto length = static_cast<std::size_t>(result.ptr - buffer.data());
    // Go's cleanup: a two-digit negative exponent loses its leading zero (1e-07 -> 1e-7).
    if (length >= 4 && buffer[length - 4] == 'e' && buffer[length - 3] == '-' &&
        buffer[length - 2] == '0') {
      buffer[length - 2] = buffer[length - 1];
      --length;
    }
    out.append(buffer.data(), length);
    return;
  }
  if (magnitude < kExactIntegerLimit) {
    // Below 2^53 the shortest fixed form has exactly the shortest round-trip digits.
    std::array<char, 32> buffer;
    const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value,
                                      std::chars_format::fixed);
    out.append(buffer.data(), result.ptr);
    return;
  }
  AppendShortestFixed(out, value);
}

void JsonWriter::BeginObject() { Open('{'); }
void JsonWriter::EndObject() { Close('}'); }
void JsonWriter::BeginArray() { Open('['); }
void JsonWriter::EndArray() { Close(']'); }

void JsonWriter::Key(std::string_view key) {
  BeforeElement();
  AppendJsonString(out_, key);
  out_.push_back(':');
  if (style_ == Style::kIndented) out_.push_back(' ');
  after_key_ = true;
}

void JsonWriter::String(std::string_view value) {
  BeforeElement();
  AppendJsonString(out_, value);
  need_comma_ = true;
}

void JsonWriter::Double(double value) {
  BeforeElement();
  AppendJsonDouble(out_, value);
  need_comma_ = true;
}

void JsonWriter::Int(std::int64_t value) {
  BeforeElement();
  AppendInteger(out_, value);
  need_comma_ = true;
}

void JsonWriter::Uint(std::uint64_t value) {
  BeforeElement();
  AppendInteger(out_, value);
  need_comma_ = true;
}

void JsonWriter::Bool(bool value) {
  BeforeElement();
  out_.append(value ? "true" : "false");
  need_comma_ = true;
}

void JsonWriter::Null() {
  BeforeElement();
  out_.append("null");
  need_comma_ = true;
}

void JsonWriter::BeforeElement() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (need_comma_) out_.push_back(',');
  if (style_ == Style::kIndented && depth_ > 0) NewLine();
}

void JsonWriter::Open(char bracket) {
  BeforeElement();
  out_.push_back(bracket);
  ++depth_;
  need_comma_ = false;
}

void JsonWriter::Close(char bracket) {
  --depth_;
  // An empty container stays "[]" / "{}" in the indented style too, as MarshalIndent writes it.
  if (need_comma_ && style_ == Style::kIndented) NewLine();
  out_.push_back(bracket);
  need_comma_ = true;
}

void JsonWriter::NewLine() {
  out_.push_back('\n');
  out_.append(static_cast<std::size_t>(depth_) * kIndentWidth, ' ');
}

}  // namespace neuronmon::exporter
