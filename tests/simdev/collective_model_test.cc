#include "simdev/collective_model.h"

#include <gtest/gtest.h>

#include <string>

namespace neuronmon::simdev {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

InstanceSpec Trn2() { return *FindPreset("trn2.48xlarge"); }

CollectiveCost AllReduce(double bytes, int devices = 16, int nodes = 1) {
  return EstimateCollective(Trn2(), {devices, nodes, false}, CollectiveKind::kAllReduce, bytes, 0);
}

TEST(CollectiveModel, AlgorithmFollowsMessageSize) {
  EXPECT_EQ(std::string(AllReduce(64 * 1024).algorithm), "mesh");
  EXPECT_EQ(std::string(AllReduce(4 * kMiB).algorithm), "rdh");
  EXPECT_EQ(std::string(AllReduce(64 * kMiB).algorithm), "kangaring");
  const InstanceSpec inf2 = *FindPreset("inf2.48xlarge");
  EXPECT_EQ(
      std::string(EstimateCollective(inf2, {12, 1, false}, CollectiveKind::kAllReduce, 8 * kMiB, 0)
                      .algorithm),
      "ring");
}

TEST(CollectiveModel, LatencyIsHopsTimesHopLatencyPlusTransfer) {
  const CollectiveCost small = AllReduce(1024);
  EXPECT_EQ(small.hops, 2);
  EXPECT_DOUBLE_EQ(small.floor_seconds, 2e-6);  // 1 us per hop at idle HBM
  EXPECT_GT(small.seconds, small.floor_seconds);
  EXPECT_LT(small.seconds, 20e-6);
  const CollectiveCost rdh = AllReduce(8 * kMiB);
  EXPECT_EQ(rdh.hops, 8);  // 2 log2(16)
  // 2(r-1)/r x 8 MiB over 30% of 1024 GB/s, plus hops and launch.
  EXPECT_NEAR(rdh.seconds, 8e-6 + 4e-6 + 1.875 * 8 * kMiB / (1024e9 * 0.3), 1e-9);
  EXPECT_LT(AllReduce(1 * kMiB).seconds, AllReduce(64 * kMiB).seconds);
}

TEST(CollectiveModel, HopLatencyRisesWithHbmLoad) {
  const InstanceSpec trn2 = Trn2();
  const auto idle = EstimateCollective(trn2, {16, 1, false}, CollectiveKind::kAllGather, 1024, 0);
  const auto busy = EstimateCollective(trn2, {16, 1, false}, CollectiveKind::kAllGather, 1024, 1);
  EXPECT_DOUBLE_EQ(busy.floor_seconds, 2 * idle.floor_seconds);  // 1 us -> 2 us per hop
}

TEST(CollectiveModel, InterNodeHopsCostFifteenMicroseconds) {
  const CollectiveCost four = AllReduce(1024, 16, 4);
  EXPECT_EQ(four.inter_node_hops, 6);
  EXPECT_GE(four.floor_seconds, 6 * 15e-6);
  EXPECT_GT(four.seconds, AllReduce(1024).seconds + 90e-6);
}

TEST(CollectiveModel, BusFactorsAsNccomTest) {
  EXPECT_DOUBLE_EQ(BusFactor(CollectiveKind::kAllReduce, 16), 2.0 * 15 / 16);
  EXPECT_DOUBLE_EQ(BusFactor(CollectiveKind::kAllGather, 16), 15.0 / 16);
  EXPECT_DOUBLE_EQ(BusFactor(CollectiveKind::kReduceScatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(BusFactor(CollectiveKind::kSendRecv, 16), 1.0);
}

}  // namespace
}  // namespace neuronmon::simdev
