#include "daemon/core/metrics/exposition_format.h"

#include <optional>

#include "daemon/core/metrics/exposition_text.h"
#include "daemon/core/metrics/openmetrics.h"
#include "proto/common/http_lists.h"
#include "proto/common/text.h"

namespace neuronmon::daemon {
namespace {

// The format one Accept media range decides for, if any.
std::optional<ExpositionFormat> FormatOf(const WeightedMember& range) {
  std::optional<std::string_view> version;
  for (const HttpParameter& p : range.parameters) {
    if (EqualsIgnoringCase(p.name, "version")) version = p.value;
  }
  if (EqualsIgnoringCase(range.value, "text/plain") && (!version || *version == "0.0.4")) {
    return ExpositionFormat::kText;
  }
  if (EqualsIgnoringCase(range.value, "application/openmetrics-text") &&
      (!version || *version == "1.0.0")) {
    return ExpositionFormat::kOpenMetrics;
  }
  return std::nullopt;
}

}  // namespace

std::string Render(const Exposition& exposition, ExpositionFormat format) {
  return format == ExpositionFormat::kOpenMetrics ? RenderOpenMetrics(exposition)
                                                  : RenderText(exposition);
}

std::string_view ContentType(ExpositionFormat format) {
  return format == ExpositionFormat::kOpenMetrics
             ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
             : "text/plain; version=0.0.4; charset=utf-8";
}

ExpositionFormat ChooseFormat(std::string_view accept_header) {
  ExpositionFormat best = ExpositionFormat::kText;
  double best_q = 0;
  for (const WeightedMember& range : ParseWeightedList(accept_header, WeightSyntax::kLenient)) {
    const std::optional<ExpositionFormat> format = FormatOf(range);
    if (format && range.weight > best_q) {
      best = *format;
      best_q = range.weight;
    }
  }
  return best;
}

}  // namespace neuronmon::daemon
