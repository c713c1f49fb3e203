// The daemon's Prometheus model: per scrape the daemon fills an Exposition with MetricFamily
// values, one model for every output format (exposition_format.h chooses and renders one).
// Exposition::Add validates each family against the formats and against the rules `promtool check
// metrics` enforces, so a rendered exposition always parses and lints clean; a bad family is
// refused with a Status and the rest of the scrape is unaffected. Plain values; not thread-safe:
// build an Exposition on one thread, then share it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "proto/common/status.h"

namespace neuronmon::daemon {

enum class MetricType { kCounter, kGauge, kHistogram, kInfo, kUnknown };

struct Label {
  std::string name;
  std::string value;  // any UTF-8; invalid sequences are rendered as U+FFFD
};

struct HistogramBucket {
  double upper_bound = 0;              // the `le` label
  std::uint64_t cumulative_count = 0;  // observations <= upper_bound
};

struct HistogramValue {
  // Ascending upper bounds. A final +Inf bucket may be given (its count must equal `count`);
  // when it is missing the writers add it.
  std::vector<HistogramBucket> buckets;
  double sum = 0;
  std::uint64_t count = 0;
};

struct MetricSample {
  std::vector<Label> labels;  // rendered in this order; `le` and `quantile` are reserved
  double value = 0;           // counter, gauge, unknown; ignored for info (always 1) and histogram
  HistogramValue histogram;   // histogram families only
  // Counters and histograms: seconds since the epoch when the series started. OpenMetrics renders
  // it as `<name>_created`; text format 0.0.4 has no place for it and drops it.
  std::optional<double> created_seconds;
};

struct MetricFamily {
  // The sample name as text format shows it: counters end in "_total", info families in "_info"
  // (OpenMetrics strips those suffixes from its HELP/TYPE/UNIT lines).
  std::string name;
  std::string help;  // required, any UTF-8
  MetricType type = MetricType::kGauge;
  // OpenMetrics `# UNIT`, e.g. "seconds"; the name must end in "_<unit>" (before "_total").
  std::optional<std::string> unit;
  std::vector<MetricSample> samples;
};

// The families of one scrape, in the order they were added.
class Exposition {
 public:
  // Validates `family` and appends it. On error (kInvalidArgument; the message names the family
  // and the broken rule) nothing is added. Refused: invalid or camelCase metric/label names,
  // colons, duplicate label names or label sets, reserved labels, suffixes that do not match the
  // type (counter without "_total", gauge with "_total", "_sum"/"_count"/"_bucket" on a family
  // neither histogram nor untyped, as promlint), type names or abbreviated/non-base units in
  // the name (as promlint), empty help, a unit that is not the name's suffix, a name another
  // family already renders, negative or NaN counters, and histograms whose bounds do not ascend
  // or whose counts are not cumulative.
  Status Add(MetricFamily family);

  const std::vector<MetricFamily>& families() const { return families_; }

 private:
  std::vector<MetricFamily> families_;
  std::set<std::string, std::less<>> rendered_names_;  // every name some family already renders
};

// The family name OpenMetrics shows in HELP/TYPE/UNIT: `family.name` without the "_total" of a
// counter or the "_info" of an info family. Views `family.name`.
std::string_view OpenMetricsName(const MetricFamily& family);

}  // namespace neuronmon::daemon
