#include "daemon/core/metrics/exposition_lines.h"

#include <cmath>

namespace neuronmon::daemon::exposition_internal {
namespace {

void AppendEscaped(std::string* out, std::string_view s, bool escape_quote) {
  std::size_t run = 0;  // start of the characters not yet appended
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const char* escaped = c == '\\'                  ? "\\\\"
                          : c == '\n'                ? "\\n"
                          : c == '"' && escape_quote ? "\\\""
                                                     : nullptr;
    if (escaped == nullptr) continue;
    out->append(s.substr(run, i - run)).append(escaped);
    run = i + 1;
  }
  out->append(s.substr(run));
}

// `a="1",b="2"`: the labels of a sample line, without braces.
void AppendLabels(std::string* out, const std::vector<Label>& labels) {
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (i > 0) out->push_back(',');
    out->append(labels[i].name).append("=\"");
    AppendEscaped(out, labels[i].value, /*escape_quote=*/true);
    out->push_back('"');
  }
}

std::string LabelText(const std::vector<Label>& labels) {
  std::string out;
  AppendLabels(&out, labels);
  return out;
}

// One sample line from its rendered labels (LabelText); `le` is empty or the formatted bucket
// bound, appended as the last label.
void AppendSampleText(std::string* out, std::string_view name, std::string_view suffix,
                      std::string_view labels, std::string_view le, std::string_view value) {
  out->append(name).append(suffix);
  if (!labels.empty() || !le.empty()) {
    out->push_back('{');
    out->append(labels);
    if (!le.empty()) {
      if (!labels.empty()) out->push_back(',');
      out->append("le=\"").append(le).append("\"");
    }
    out->push_back('}');
  }
  out->append(" ").append(value).append("\n");
}

const std::string& BoundText(BoundTexts& cache, std::size_t i, double bound,
                             const NumberStyle& style) {
  if (i >= cache.size()) cache.resize(i + 1, {std::nan(""), ""});
  if (!(cache[i].first == bound)) cache[i] = {bound, style.real(bound)};
  return cache[i].second;
}

}  // namespace

void AppendSample(std::string* out, std::string_view name, std::string_view suffix,
                  const std::vector<Label>& labels, std::string_view le, std::string_view value) {
  if (!le.empty()) return AppendSampleText(out, name, suffix, LabelText(labels), le, value);
  out->append(name).append(suffix);
  if (!labels.empty()) {
    out->push_back('{');
    AppendLabels(out, labels);
    out->push_back('}');
  }
  out->append(" ").append(value).append("\n");
}

void AppendHistogram(std::string* out, std::string_view name, const MetricSample& s,
                     const NumberStyle& style, BoundTexts& bounds) {
  const HistogramValue& h = s.histogram;
  const std::string labels = LabelText(s.labels);  // once for all the sample's lines
  for (std::size_t i = 0; i < h.buckets.size(); ++i) {
    const HistogramBucket& b = h.buckets[i];
    AppendSampleText(out, name, "_bucket", labels, BoundText(bounds, i, b.upper_bound, style),
                     style.count(b.cumulative_count));
  }
  if (h.buckets.empty() || !std::isinf(h.buckets.back().upper_bound)) {
    AppendSampleText(out, name, "_bucket", labels, "+Inf", style.count(h.count));
  }
  AppendSampleText(out, name, "_sum", labels, "", style.real(h.sum));
  AppendSampleText(out, name, "_count", labels, "", style.count(h.count));
}

void AppendHeader(std::string* out, std::string_view name, std::string_view help,
                  std::string_view type, bool escape_quote) {
  out->append("# HELP ").append(name).append(" ");
  AppendEscaped(out, help, escape_quote);
  out->append("\n# TYPE ").append(name).append(" ").append(type).append("\n");
}

std::size_t SizeHint(const Exposition& exposition) {
  std::size_t bytes = 0;
  for (const MetricFamily& f : exposition.families()) {
    bytes += 2 * f.name.size() + f.help.size() + 32;
    for (const MetricSample& s : f.samples) {
      std::size_t line = f.name.size() + 40;
      for (const Label& label : s.labels) line += label.name.size() + label.value.size() + 4;
      bytes += line * (f.type == MetricType::kHistogram ? s.histogram.buckets.size() + 3 : 1);
    }
  }
  return bytes + 16;
}

}  // namespace neuronmon::daemon::exposition_internal
