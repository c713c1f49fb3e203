#include "proto/names/names.h"

#include <gtest/gtest.h>

namespace neuronmon {
namespace {

TEST(PodLabel, NamesThePodWithItsNamespace) {
  v1::Attribution a;
  a.set_pod("vllm-0");
  EXPECT_EQ(PodLabel(a), "pod vllm-0");
  EXPECT_EQ(PodLabelWithContainer(a), "pod vllm-0");
  a.set_namespace_("inference");
  EXPECT_EQ(PodLabel(a), "pod inference/vllm-0");
  a.set_container("vllm");
  EXPECT_EQ(PodLabel(a), "pod inference/vllm-0");
  EXPECT_EQ(PodLabelWithContainer(a), "pod inference/vllm-0 (container vllm)");
  EXPECT_EQ(JobOf(a), "inference/vllm-0") << "the job cell is the pod without the word";
}

TEST(PodLabel, ReadsAnAllocationTheSameWay) {
  v1::PodAllocation allocation;
  allocation.set_pod("train-7");
  allocation.set_container("trainer");
  EXPECT_EQ(PodLabel(allocation), "pod train-7");
  EXPECT_EQ(PodLabelWithContainer(allocation), "pod train-7 (container trainer)");
  allocation.set_namespace_("ml");
  EXPECT_EQ(PodLabel(allocation), "pod ml/train-7");
  EXPECT_EQ(PodLabelWithContainer(allocation), "pod ml/train-7 (container trainer)");
}

TEST(StuckRankClause, SaysWhichRankHasNotJoinedWhatForHowLong) {
  v1::HangDetail hang;
  hang.set_operation(v1::COLLECTIVE_OP_ALL_REDUCE);
  hang.set_stuck_seconds(41.9);
  hang.set_stuck_rank("rank5");
  EXPECT_EQ(StuckRankClause(hang), "rank5 has not joined all_reduce for 41 s");
}

}  // namespace
}  // namespace neuronmon
