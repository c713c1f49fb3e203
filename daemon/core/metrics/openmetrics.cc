#include "daemon/core/metrics/openmetrics.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <string_view>

#include "daemon/core/metrics/exposition_lines.h"
#include "daemon/core/metrics/exposition_text.h"

namespace neuronmon::daemon {
namespace {

using exposition_internal::AppendHeader;
using exposition_internal::AppendHistogram;
using exposition_internal::AppendSample;
using exposition_internal::BoundTexts;
using exposition_internal::NumberStyle;
using exposition_internal::SizeHint;

// client_golang's OpenMetrics writer spells counts as integers (its text writer, as floats).
const NumberStyle kOpenMetricsNumbers = {FormatOpenMetricsFloat,
                                         [](std::uint64_t c) { return std::to_string(c); }};

void AppendOpenMetricsFamily(std::string* out, const MetricFamily& f) {
  // Indexed by MetricType.
  static constexpr std::array<std::string_view, 5> kTypes = {"counter", "gauge", "histogram",
                                                             "info", "unknown"};
  const std::string_view name = OpenMetricsName(f);
  AppendHeader(out, name, f.help, kTypes[static_cast<int>(f.type)], /*escape_quote=*/true);
  if (f.unit) out->append("# UNIT ").append(name).append(" ").append(*f.unit).append("\n");
  BoundTexts bounds;
  for (const MetricSample& s : f.samples) {
    if (f.type == MetricType::kHistogram) {
      AppendHistogram(out, name, s, kOpenMetricsNumbers, bounds);
    } else if (f.type == MetricType::kInfo) {
      AppendSample(out, name, "_info", s.labels, "", "1");
    } else {
      const std::string_view suffix = f.type == MetricType::kCounter ? "_total" : "";
      AppendSample(out, name, suffix, s.labels, "", FormatOpenMetricsFloat(s.value));
    }
    if (s.created_seconds) {
      AppendSample(out, name, "_created", s.labels, "", FormatOpenMetricsFloat(*s.created_seconds));
    }
  }
}

}  // namespace

std::string RenderOpenMetrics(const Exposition& exposition) {
  std::string out;
  out.reserve(SizeHint(exposition));
  for (const MetricFamily& f : exposition.families()) AppendOpenMetricsFamily(&out, f);
  out.append("# EOF\n");
  return out;
}

std::string FormatOpenMetricsFloat(double value) {
  std::string s = FormatTextFloat(value);
  if (std::isfinite(value) && s.find_first_of(".e") == std::string::npos) s.append(".0");
  return s;
}

}  // namespace neuronmon::daemon
