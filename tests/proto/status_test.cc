#include "proto/common/status.h"

#include <gtest/gtest.h>

#include <memory>

#include "proto/common/clock.h"

namespace neuronmon {
namespace {

TEST(Status, OkHasNoMessage) {
  Status s = Status::Ok();
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.ToString(), "ok");
}

TEST(Status, ErrorCarriesCodeAndMessage) {
  Status s = Status::InvalidArgument("period: must be at least 10ms");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.ToString(), "invalid argument: period: must be at least 10ms");
}

TEST(Result, HoldsValueOrStatus) {
  Result<std::unique_ptr<int>> good(std::make_unique<int>(7));
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(**good, 7);
  EXPECT_TRUE(good.status().ok());
  std::unique_ptr<int> moved = std::move(good).value();
  EXPECT_EQ(*moved, 7);

  Result<int> bad(Status::NotFound("no such scenario"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(bad.status().message(), "no such scenario");
}

TEST(ManualClock, AdvancesMonotonicAndWallTogether) {
  ManualClock clock;
  const MonoTime mono = clock.Now();
  const WallTime wall = clock.WallNow();
  clock.Advance(std::chrono::milliseconds(1500));
  EXPECT_EQ(clock.Now() - mono, std::chrono::milliseconds(1500));
  EXPECT_EQ(clock.WallNow() - wall, std::chrono::milliseconds(1500));
  EXPECT_EQ(ToUnixNanos(WallTime(std::chrono::seconds(2))), 2'000'000'000);
}

}  // namespace
}  // namespace neuronmon
