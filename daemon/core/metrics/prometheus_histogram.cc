#include "daemon/core/metrics/prometheus_histogram.h"

#include <cmath>
#include <cstdint>
#include <limits>

namespace neuronmon::daemon {

std::vector<double> CollectiveLatencyBounds() {
  std::vector<double> bounds;
  for (int k = 0; k <= 24; ++k) bounds.push_back(std::ldexp(LatencyHistogram::kFirstBound, k));
  return bounds;
}

HistogramValue ToPrometheusHistogram(const LatencyHistogram& h, const std::vector<double>& bounds) {
  HistogramValue out;
  out.sum = h.sum_seconds();
  out.count = h.count();
  out.buckets.reserve(bounds.size() + 1);
  auto it = h.buckets().begin();
  std::uint64_t cumulative = 0;
  for (double bound : bounds) {
    // Buckets are sorted by index, so one pass over them serves every bound.
    while (it != h.buckets().end() && it->first + 1 < LatencyHistogram::kBuckets &&
           LatencyHistogram::UpperEdge(it->first) <= bound * (1 + 1e-12)) {
      cumulative += it->second;
      ++it;
    }
    out.buckets.push_back({bound, cumulative});
  }
  out.buckets.push_back({std::numeric_limits<double>::infinity(), out.count});
  return out;
}

}  // namespace neuronmon::daemon
