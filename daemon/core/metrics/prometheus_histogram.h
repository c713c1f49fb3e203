// A LatencyHistogram (proto/common/latency_histogram.h) as a Prometheus histogram: the bounds of
// neuron_collective_latency_seconds and the conversion. Pure functions; thread-safe.
#pragma once

#include <vector>

#include "daemon/core/metrics/exposition.h"
#include "proto/common/latency_histogram.h"

namespace neuronmon::daemon {

// The `le` bounds of neuron_collective_latency_seconds: every octave, 1e-6 * 2^k s, k = 0..24.
std::vector<double> CollectiveLatencyBounds();

// A LatencyHistogram as a Prometheus histogram with `bounds` (ascending) and +Inf: each bound
// counts the buckets whose upper edge is at most the bound. The highest bucket also holds
// everything above ~16.8 s, so it counts only in +Inf: no `le` bucket claims observations it may
// not hold (the lowest bucket, which also holds everything below 1 us, ends at 1.09 us).
HistogramValue ToPrometheusHistogram(const LatencyHistogram& h, const std::vector<double>& bounds);

}  // namespace neuronmon::daemon
