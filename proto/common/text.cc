#include "proto/common/text.h"

#include <algorithm>
#include <charconv>
#include <system_error>

namespace neuronmon {
namespace {

char LowerAscii(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

}  // namespace

std::string_view Trim(std::string_view text, std::string_view chars) {
  const std::size_t begin = text.find_first_not_of(chars);
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(chars) - begin + 1);
}

std::string ToLowerAscii(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = LowerAscii(c);
  return out;
}

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return LowerAscii(x) == LowerAscii(y);
         });
}

std::string FormatFixed(double value, int digits) {
  char buf[352];  // the longest double in fixed notation, with up to 24 digits after the point
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::fixed,
                                       std::clamp(digits, 0, 24));
  return ec == std::errc() ? std::string(buf, end) : std::string();
}

}  // namespace neuronmon
