// Subscription: periods normalised to base periods, equal requests sharing a key, bad input
// refused.
#include "daemon/core/report/subscription.h"

#include <gtest/gtest.h>

#include <chrono>

#include "tests/daemon/core_fixture.h"

namespace neuronmon::daemon {
namespace {

using std::chrono::seconds;
using testing::Request;

TEST(Subscription, PeriodsRoundUpToBasePeriods) {
  Result<Subscription> s = Subscription::FromRequest(Request({{v1::GROUP_NEURONCORE_COUNTERS, 1000},
                                                              {v1::GROUP_MEMORY_USED, 4500},
                                                              {v1::GROUP_HBM_STATS, 0}}),
                                                     seconds(1));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->Every(v1::GROUP_NEURONCORE_COUNTERS), 1u);
  EXPECT_EQ(s->Every(v1::GROUP_MEMORY_USED), 5u);
  EXPECT_EQ(s->Every(v1::GROUP_HBM_STATS), 1u);
  EXPECT_FALSE(s->Subscribed(v1::GROUP_EXECUTION_STATS));
  EXPECT_TRUE(s->Due(v1::GROUP_MEMORY_USED, 10));
  EXPECT_FALSE(s->Due(v1::GROUP_MEMORY_USED, 11));
  EXPECT_EQ(s->Describe(seconds(1)),
            "neuroncore_counters every 1s, memory_used every 5s, hbm_stats every 1s");
}

TEST(Subscription, EqualRequestsShareAKey) {
  auto a = Subscription::FromRequest(Request({{v1::GROUP_MEMORY_USED, 4200}}, "rank"), seconds(1));
  auto b = Subscription::FromRequest(Request({{v1::GROUP_MEMORY_USED, 5000}}, "rank"), seconds(1));
  auto c = Subscription::FromRequest(Request({{v1::GROUP_MEMORY_USED, 5000}}, "other"), seconds(1));
  EXPECT_EQ(a->key(), b->key());
  EXPECT_NE(a->key(), c->key());
}

TEST(Subscription, EmptyMeansEverythingAndBadInputIsRefused) {
  auto all = Subscription::FromRequest(v1::Subscribe(), seconds(1));
  ASSERT_TRUE(all.ok());
  for (v1::Group g : AllGroups()) {
    EXPECT_EQ(all->Every(g), IsNamedOnlyGroup(g) ? 0u : 1u) << GroupName(g);
  }
  auto bad_regex = Subscription::FromRequest(Request({}, "llama[("), seconds(1));
  ASSERT_FALSE(bad_regex.ok());
  EXPECT_EQ(bad_regex.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad_regex.status().message().find("tag_filter \"llama[(\""), std::string::npos);
  v1::Subscribe unknown;
  unknown.add_groups()->set_group(static_cast<v1::Group>(9));
  EXPECT_EQ(Subscription::FromRequest(unknown, seconds(1)).status().message(), "unknown group 9");
  auto tags = Subscription::FromRequest(Request({}, "^llama"), seconds(1));
  EXPECT_TRUE(tags->Matches("llama3-rank0"));
  EXPECT_FALSE(tags->Matches("vllm"));
}

}  // namespace
}  // namespace neuronmon::daemon
