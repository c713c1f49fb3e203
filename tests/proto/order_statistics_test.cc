#include "proto/common/order_statistics.h"

#include <gtest/gtest.h>

#include <vector>

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

TEST(Quantile, RoundsTheRankDownOrToTheNearest) {
  const std::vector<double> v = {50, 10, 40, 20, 30};  // ranks 0..4: 10 20 30 40 50
  EXPECT_DOUBLE_EQ(Quantile(v, 0, RankRounding::kDown), 10);
  EXPECT_DOUBLE_EQ(Quantile(v, 1, RankRounding::kDown), 50);
  EXPECT_DOUBLE_EQ(Quantile(v, 0.5, RankRounding::kDown), 30);
  EXPECT_DOUBLE_EQ(Quantile(v, 0.6, RankRounding::kDown), 30);  // rank 2.4
  EXPECT_DOUBLE_EQ(Quantile(v, 0.6, RankRounding::kNearest), 30);
  EXPECT_DOUBLE_EQ(Quantile(v, 0.99, RankRounding::kDown), 40);  // rank 3.96
  EXPECT_DOUBLE_EQ(Quantile(v, 0.99, RankRounding::kNearest), 50);
  EXPECT_DOUBLE_EQ(Quantile(v, 0.625, RankRounding::kDown), 30);     // rank 2.5
  EXPECT_DOUBLE_EQ(Quantile(v, 0.625, RankRounding::kNearest), 40);  // a half rounds up
}

TEST(Quantile, IsOneOfTheValuesNeverAnInterpolation) {
  EXPECT_DOUBLE_EQ(Quantile({1, 2}, 0.5, RankRounding::kDown), 1);
  EXPECT_DOUBLE_EQ(Quantile({1, 2}, 0.5, RankRounding::kNearest), 2);
  EXPECT_DOUBLE_EQ(Quantile({7}, 0.99, RankRounding::kNearest), 7);
}

TEST(Quantile, OfNothingIsZero) {
  EXPECT_DOUBLE_EQ(Quantile({}, 0.5, RankRounding::kDown), 0);
  EXPECT_DOUBLE_EQ(Quantile({}, 0.99, RankRounding::kNearest), 0);
}

}  // namespace
}  // namespace neuronmon
