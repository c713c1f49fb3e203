// Test helpers for the exposition model and its writers: literal families and samples, and an
// Exposition built from families that must all be accepted.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "daemon/core/metrics/exposition.h"

namespace neuronmon::daemon::testing {

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A family without a unit.
MetricFamily Family(std::string name, MetricType type, std::vector<MetricSample> samples,
                    std::string help = "Some help.");

MetricSample Sample(std::vector<Label> labels, double value);

MetricSample HistogramSample(std::vector<Label> labels, std::vector<HistogramBucket> buckets,
                             double sum, std::uint64_t count);

// An Exposition of `families`, in order; a test failure for each family Add refuses.
Exposition Build(std::vector<MetricFamily> families);

// trainium_collective_latency_seconds: an all_reduce sample without a +Inf bucket and an
// all_gather one with it, whose count needs an exponent in text format.
MetricFamily LatencyHistogram();

}  // namespace neuronmon::daemon::testing
