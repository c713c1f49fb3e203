// LatencyHistogram: a sparse, cumulative histogram of latencies in seconds with fixed exponential
// buckets — bucket i covers [1us * 2^(i/8), 1us * 2^((i+1)/8)); bucket 0 also holds everything
// below 1 us and bucket kBuckets-1 everything above (~16.7 s). The same layout travels on the wire
// (v1::Histogram) and backs Prometheus histograms, so percentiles and `le` buckets agree.
// Counts only grow; Minus() gives the histogram of a window. Value type; thread-compatible.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace neuronmon {

class LatencyHistogram {
 public:
  static constexpr int kBucketsPerOctave = 8;
  static constexpr int kBuckets = 24 * kBucketsPerOctave;  // 1 us .. ~16.7 s
  static constexpr double kFirstBound = 1e-6;

  // Index of the bucket holding `seconds`.
  static int BucketFor(double seconds);
  // Lower and upper edges of bucket i in seconds.
  static double LowerEdge(int i);
  static double UpperEdge(int i);

  // Adds `n` observations of `seconds`.
  void Add(double seconds, std::uint64_t n = 1);
  // Adds every bucket of `other`.
  void Merge(const LatencyHistogram& other);
  // Bucketwise this - earlier; a bucket that shrank (counter reset) counts as this bucket's value.
  LatencyHistogram Minus(const LatencyHistogram& earlier) const;

  std::uint64_t count() const { return count_; }
  double sum_seconds() const { return sum_; }
  // (index, count) pairs, ascending index, no zero counts.
  const std::vector<std::pair<std::uint16_t, std::uint64_t>>& buckets() const { return buckets_; }
  bool empty() const { return count_ == 0; }

  // The q-quantile (0 <= q <= 1) by linear interpolation inside the bucket, clamped to the observed
  // range of buckets. REQUIRES: !empty().
  double Quantile(double q) const;
  // Observations <= `bound` seconds, counting whole buckets whose upper edge is <= bound.
  std::uint64_t CountAtOrBelow(double bound) const;

  // Rebuilds from wire form; the count is the sum of the buckets. Entries need not be sorted;
  // duplicates add; indices out of range are dropped.
  static LatencyHistogram FromBuckets(
      double sum, const std::vector<std::pair<std::uint16_t, std::uint64_t>>& b);

  friend bool operator==(const LatencyHistogram&, const LatencyHistogram&) = default;

 private:
  std::uint64_t count_ = 0;
  double sum_ = 0;
  std::vector<std::pair<std::uint16_t, std::uint64_t>> buckets_;
};

}  // namespace neuronmon
