// Internals of the exposition writers (exposition_text.h, openmetrics.h), shared by their .cc
// files: the lines both formats have in common — HELP/TYPE headers, sample lines with escaped
// labels and the lines of a histogram sample — given how a format spells its numbers. Not part of
// the daemon's API. Pure; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon/core/metrics/exposition.h"

namespace neuronmon::daemon::exposition_internal {

// How a format spells floats and histogram counts.
struct NumberStyle {
  std::string (*real)(double);
  std::string (*count)(std::uint64_t);
};

// The `le` text of each bound, kept across the samples of a family, which mostly share bounds.
// One per family being rendered; starts empty.
using BoundTexts = std::vector<std::pair<double, std::string>>;

// Appends "# HELP <name> <help>" and "# TYPE <name> <type>" lines. Backslashes and newlines of
// `help` are escaped, and double quotes too when `escape_quote`.
void AppendHeader(std::string* out, std::string_view name, std::string_view help,
                  std::string_view type, bool escape_quote);

// Appends the line `<name><suffix>{<labels>} <value>` (no braces without labels), label values
// escaped. `le` is empty or the formatted bucket bound, appended as the last label.
void AppendSample(std::string* out, std::string_view name, std::string_view suffix,
                  const std::vector<Label>& labels, std::string_view le, std::string_view value);

// Appends the `_bucket` lines of histogram sample `s` (with a +Inf bucket when its buckets lack
// one), then `_sum` and `_count`, numbers spelled by `style`. `bounds` caches the `le` texts across
// the samples of one family.
void AppendHistogram(std::string* out, std::string_view name, const MetricSample& s,
                     const NumberStyle& style, BoundTexts& bounds);

// About the rendered size of `exposition` in either format, so the output grows once rather than
// by repeated doubling.
std::size_t SizeHint(const Exposition& exposition);

}  // namespace neuronmon::daemon::exposition_internal
