#include "tests/daemon/exposition_fixture.h"

#include <gtest/gtest.h>

#include <optional>
#include <utility>

namespace neuronmon::daemon::testing {

MetricFamily Family(std::string name, MetricType type, std::vector<MetricSample> samples,
                    std::string help) {
  return MetricFamily{std::move(name), std::move(help), type, std::nullopt, std::move(samples)};
}

MetricSample Sample(std::vector<Label> labels, double value) {
  MetricSample s;
  s.labels = std::move(labels);
  s.value = value;
  return s;
}

MetricSample HistogramSample(std::vector<Label> labels, std::vector<HistogramBucket> buckets,
                             double sum, std::uint64_t count) {
  MetricSample s;
  s.labels = std::move(labels);
  s.histogram = HistogramValue{std::move(buckets), sum, count};
  return s;
}

Exposition Build(std::vector<MetricFamily> families) {
  Exposition e;
  for (MetricFamily& f : families) {
    const std::string name = f.name;
    EXPECT_TRUE(e.Add(std::move(f)).ok()) << name;
  }
  return e;
}

MetricFamily LatencyHistogram() {
  return Family(
      "trainium_collective_latency_seconds", MetricType::kHistogram,
      {HistogramSample({{"op", "all_reduce"}}, {{0.005, 1}, {0.1, 4}, {1, 9}}, 2.5, 10),
       HistogramSample({{"op", "all_gather"}}, {{0.005, 0}, {kInf, 1234567}}, 1e3, 1234567)});
}

}  // namespace neuronmon::daemon::testing
