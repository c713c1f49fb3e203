#include "proto/common/latency_histogram.h"

#include <gtest/gtest.h>

#include <cmath>

#include "proto/common/socket_path.h"

namespace neuronmon {
namespace {

TEST(LatencyHistogram, BucketsAreEighthOctavesFromOneMicrosecond) {
  EXPECT_EQ(LatencyHistogram::BucketFor(0), 0);
  EXPECT_EQ(LatencyHistogram::BucketFor(0.5e-6), 0);
  EXPECT_EQ(LatencyHistogram::BucketFor(1e-6), 0);
  EXPECT_EQ(LatencyHistogram::BucketFor(2e-6), 8);
  EXPECT_EQ(LatencyHistogram::BucketFor(2.1e-6), 8);
  EXPECT_EQ(LatencyHistogram::BucketFor(1e-3), 79);  // log2(1000) * 8 = 79.7
  EXPECT_EQ(LatencyHistogram::BucketFor(1e9), LatencyHistogram::kBuckets - 1);
  EXPECT_EQ(LatencyHistogram::BucketFor(std::nan("")), 0);
  for (int i = 0; i < LatencyHistogram::kBuckets - 1; ++i) {
    const double lo = LatencyHistogram::LowerEdge(i);
    EXPECT_EQ(LatencyHistogram::BucketFor(lo * (1 + 1e-9)), i) << i;
    EXPECT_EQ(LatencyHistogram::BucketFor(LatencyHistogram::UpperEdge(i) * (1 - 1e-9)), i) << i;
  }
  EXPECT_NEAR(LatencyHistogram::UpperEdge(LatencyHistogram::kBuckets - 1), 16.777216, 1e-6);
}

TEST(LatencyHistogram, QuantilesInterpolateWithinBuckets) {
  LatencyHistogram h;
  h.Add(0.010, 50);
  h.Add(0.020, 49);
  h.Add(0.5, 1);
  EXPECT_EQ(h.count(), 100u);
  EXPECT_NEAR(h.sum_seconds(), 0.5 + 0.98 + 0.5, 1e-12);
  const int b10 = LatencyHistogram::BucketFor(0.010);
  EXPECT_NEAR(h.Quantile(0.0), LatencyHistogram::LowerEdge(b10), 1e-12);
  EXPECT_GE(h.Quantile(0.25), LatencyHistogram::LowerEdge(b10));
  EXPECT_LE(h.Quantile(0.25), LatencyHistogram::UpperEdge(b10));
  EXPECT_GE(h.Quantile(0.75), LatencyHistogram::LowerEdge(LatencyHistogram::BucketFor(0.020)));
  EXPECT_GT(h.Quantile(1.0), 0.45);
  EXPECT_LE(h.Quantile(0.99), h.Quantile(1.0));
}

TEST(LatencyHistogram, MinusGivesTheWindowAndSurvivesResets) {
  LatencyHistogram before;
  before.Add(1e-4, 10);
  LatencyHistogram after = before;
  after.Add(1e-4, 5);
  after.Add(1e-2, 2);
  const LatencyHistogram window = after.Minus(before);
  EXPECT_EQ(window.count(), 7u);
  EXPECT_EQ(window.buckets().size(), 2u);
  EXPECT_NEAR(window.sum_seconds(), 5e-4 + 2e-2, 1e-12);
  // Counters that restarted (smaller than before) count from zero.
  LatencyHistogram restarted;
  restarted.Add(1e-4, 3);
  EXPECT_EQ(restarted.Minus(after).count(), 3u);
}

TEST(LatencyHistogram, MergeAndWireRoundTrip) {
  LatencyHistogram a, b;
  a.Add(1e-5, 2);
  b.Add(1e-5, 3);
  b.Add(1e-1, 1);
  a.Merge(b);
  EXPECT_EQ(a.count(), 6u);
  const LatencyHistogram c = LatencyHistogram::FromBuckets(a.sum_seconds(), a.buckets());
  EXPECT_EQ(c, a);
  EXPECT_EQ(LatencyHistogram::FromBuckets(0, {{500, 4}, {3, 0}}).count(), 0u);
  EXPECT_EQ(a.CountAtOrBelow(1e-3), 5u);
}

TEST(SocketPath, DaemonAndClientsAgree) {
  SocketEnvironment root{true, "", "", 0};
  EXPECT_EQ(DaemonSocketPath(root), "/run/neuron-monitor/neuron-monitord.sock");
  SocketEnvironment unit{false, "/run/neuron-monitor", "", 998};
  EXPECT_EQ(DaemonSocketPath(unit), "/run/neuron-monitor/neuron-monitord.sock");
  SocketEnvironment user{false, "", "/run/user/1000", 1000};
  EXPECT_EQ(DaemonSocketPath(user), "/run/user/1000/neuron-monitor/neuron-monitord.sock");
  EXPECT_EQ(ClientSocketCandidates(user),
            (std::vector<std::string>{"/run/neuron-monitor/neuron-monitord.sock",
                                      "/run/user/1000/neuron-monitor/neuron-monitord.sock"}));
  SocketEnvironment bare{false, "", "", 1000};
  EXPECT_EQ(DaemonSocketPath(bare), "/tmp/neuron-monitor-1000/neuron-monitord.sock");
  EXPECT_EQ(ClientSocketCandidates(root).size(), 1u);
}

}  // namespace
}  // namespace neuronmon
