#include "daemon/core/metrics/exposition_text.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string_view>

#include "daemon/core/metrics/exposition_lines.h"

namespace neuronmon::daemon {
namespace {

using exposition_internal::AppendHeader;
using exposition_internal::AppendHistogram;
using exposition_internal::AppendSample;
using exposition_internal::BoundTexts;
using exposition_internal::NumberStyle;
using exposition_internal::SizeHint;

// client_golang's text writer passes counts through float64; its OpenMetrics writer uses integers.
// Below 1e6 Go spells a whole float64 as its integer digits.
const NumberStyle kTextNumbers = {FormatTextFloat, [](std::uint64_t c) {
                                    return c < 1000000 ? std::to_string(c)
                                                       : FormatTextFloat(static_cast<double>(c));
                                  }};

void AppendTextFamily(std::string* out, const MetricFamily& f) {
  // Indexed by MetricType.
  static constexpr std::array<std::string_view, 5> kTypes = {"counter", "gauge", "histogram",
                                                             "gauge", "untyped"};
  AppendHeader(out, f.name, f.help, kTypes[static_cast<int>(f.type)], /*escape_quote=*/false);
  BoundTexts bounds;
  for (const MetricSample& s : f.samples) {
    if (f.type == MetricType::kHistogram) {
      AppendHistogram(out, f.name, s, kTextNumbers, bounds);
    } else {
      const bool info = f.type == MetricType::kInfo;
      AppendSample(out, f.name, "", s.labels, "", info ? "1" : FormatTextFloat(s.value));
    }
  }
}

}  // namespace

std::string RenderText(const Exposition& exposition) {
  std::string out;
  out.reserve(SizeHint(exposition));
  for (const MetricFamily& f : exposition.families()) AppendTextFamily(&out, f);
  return out;
}

std::string FormatTextFloat(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  if (value == 0) return "0";
  std::array<char, 32> buf;
  char* end =
      std::to_chars(buf.data(), buf.data() + buf.size(), value, std::chars_format::scientific).ptr;
  const std::string_view scientific(buf.data(), end - buf.data());
  const std::size_t e = scientific.find('e');
  int exponent = 0;
  std::from_chars(scientific.data() + e + 2, end, exponent);
  if (scientific[e + 1] == '-') exponent = -exponent;
  // Go's 'g' with shortest precision switches to exponent form outside [1e-4, 1e6).
  if (exponent < -4 || exponent >= 6) return std::string(scientific);
  end = std::to_chars(buf.data(), buf.data() + buf.size(), value, std::chars_format::fixed).ptr;
  return std::string(buf.data(), end);
}

}  // namespace neuronmon::daemon
