#include "proto/common/latency_histogram.h"

#include <algorithm>
#include <cmath>

namespace neuronmon {

int LatencyHistogram::BucketFor(double seconds) {
  if (!(seconds > kFirstBound)) return 0;  // also NaN
  // seconds / 1us = m * 2^e with m in [0.5, 1): octave e - 1, then the eighth of the octave from
  // the fixed thresholds 2^(k/8). Exact bucket edges without a log() per observation.
  static constexpr double kThresholds[kBucketsPerOctave - 1] = {
      1.0905077326652577, 1.1892071150027210, 1.2968395546510096, 1.4142135623730951,
      1.5422108254079407, 1.6817928305074290, 1.8340080864093424};
  int e = 0;
  const double r = 2 * std::frexp(seconds / kFirstBound, &e);
  int sub = 0;
  while (sub < kBucketsPerOctave - 1 && r >= kThresholds[sub]) ++sub;
  const int i = (e - 1) * kBucketsPerOctave + sub;
  return std::clamp(i, 0, kBuckets - 1);
}

double LatencyHistogram::LowerEdge(int i) {
  return kFirstBound * std::exp2(static_cast<double>(i) / kBucketsPerOctave);
}

double LatencyHistogram::UpperEdge(int i) { return LowerEdge(i + 1); }

void LatencyHistogram::Add(double seconds, std::uint64_t n) {
  if (n == 0) return;
  const auto index = static_cast<std::uint16_t>(BucketFor(seconds));
  auto it = std::lower_bound(buckets_.begin(), buckets_.end(), index,
                             [](const auto& b, std::uint16_t i) { return b.first < i; });
  if (it != buckets_.end() && it->first == index) {
    it->second += n;
  } else {
    buckets_.insert(it, {index, n});
  }
  count_ += n;
  sum_ += seconds * static_cast<double>(n);
}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  std::vector<std::pair<std::uint16_t, std::uint64_t>> merged;
  merged.reserve(buckets_.size() + other.buckets_.size());
  auto a = buckets_.begin();
  auto b = other.buckets_.begin();
  while (a != buckets_.end() || b != other.buckets_.end()) {
    if (b == other.buckets_.end() || (a != buckets_.end() && a->first < b->first)) {
      merged.push_back(*a++);
    } else if (a == buckets_.end() || b->first < a->first) {
      merged.push_back(*b++);
    } else {
      merged.emplace_back(a->first, a->second + b->second);
      ++a;
      ++b;
    }
  }
  buckets_ = std::move(merged);
  count_ += other.count_;
  sum_ += other.sum_;
}

LatencyHistogram LatencyHistogram::Minus(const LatencyHistogram& earlier) const {
  LatencyHistogram out;
  auto e = earlier.buckets_.begin();
  bool reset = earlier.count_ > count_;
  for (const auto& [index, n] : buckets_) {
    while (e != earlier.buckets_.end() && e->first < index) ++e;
    std::uint64_t before = (e != earlier.buckets_.end() && e->first == index) ? e->second : 0;
    if (before > n) reset = true;
    if (reset) before = 0;
    if (n > before) out.buckets_.emplace_back(index, n - before);
  }
  if (reset) {
    // Counters restarted: the window holds everything counted since the restart.
    out = *this;
    return out;
  }
  for (const auto& [index, n] : out.buckets_) out.count_ += n;
  out.sum_ = std::max(0.0, sum_ - earlier.sum_);
  return out;
}

double LatencyHistogram::Quantile(double q) const {
  const double rank = std::clamp(q, 0.0, 1.0) * static_cast<double>(count_);
  double seen = 0;
  for (std::size_t k = 0; k < buckets_.size(); ++k) {
    const auto [index, n] = buckets_[k];
    const double next = seen + static_cast<double>(n);
    if (rank <= next || k + 1 == buckets_.size()) {
      const double within = std::clamp((rank - seen) / static_cast<double>(n), 0.0, 1.0);
      const double lo = LowerEdge(index);
      return lo + (UpperEdge(index) - lo) * within;
    }
    seen = next;
  }
  return 0;
}

std::uint64_t LatencyHistogram::CountAtOrBelow(double bound) const {
  std::uint64_t total = 0;
  for (const auto& [index, n] : buckets_) {
    if (UpperEdge(index) <= bound * (1 + 1e-12)) total += n;
  }
  return total;
}

LatencyHistogram LatencyHistogram::FromBuckets(
    double sum, const std::vector<std::pair<std::uint16_t, std::uint64_t>>& b) {
  LatencyHistogram out;
  for (const auto& [index, n] : b) {
    if (n == 0 || index >= kBuckets) continue;
    out.buckets_.emplace_back(index, n);
  }
  std::sort(out.buckets_.begin(), out.buckets_.end());
  std::vector<std::pair<std::uint16_t, std::uint64_t>> merged;
  for (const auto& entry : out.buckets_) {
    if (!merged.empty() && merged.back().first == entry.first) {
      merged.back().second += entry.second;
    } else {
      merged.push_back(entry);
    }
  }
  out.buckets_ = std::move(merged);
  std::uint64_t total = 0;
  for (const auto& [index, n] : out.buckets_) total += n;
  out.count_ = total;
  out.sum_ = sum;
  return out;
}

}  // namespace neuronmon
