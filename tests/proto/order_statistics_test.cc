#include "proto/common/order_statistics.h"

#include <gtest/gtest.h>

namespace neuronmon {
namespace {

TEST(Median, IsTheMiddleValueOrTheMeanOfTheTwoMiddleOnes) {
  EXPECT_DOUBLE_EQ(Median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(Median({40, 10, 30, 20}), 25);
  EXPECT_DOUBLE_EQ(Median({7}), 7);
  EXPECT_DOUBLE_EQ(Median({5, 5, 100}), 5) << "one outlier does not move it";
  EXPECT_DOUBLE_EQ(Median({-2, 4}), 1);
}

TEST(Median, OfNothingIsZero) { EXPECT_DOUBLE_EQ(Median({}), 0); }

}  // namespace
}  // namespace neuronmon
